// PlugboardTesting
