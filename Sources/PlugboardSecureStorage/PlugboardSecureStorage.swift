// PlugboardSecureStorage
