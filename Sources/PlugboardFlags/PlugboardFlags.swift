// PlugboardFlags
