// PlugboardHost
