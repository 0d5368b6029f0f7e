public import ArgumentParser
public import PlugboardModel

/// `access-token create --scope all|stop`.
extension AccessTokenScope: ExpressibleByArgument {}
