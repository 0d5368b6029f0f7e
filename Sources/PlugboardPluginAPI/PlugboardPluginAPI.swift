// PlugboardPluginAPI
