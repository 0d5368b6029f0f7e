// PlugboardStore
