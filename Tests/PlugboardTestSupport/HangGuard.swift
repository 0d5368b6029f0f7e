public import Testing

extension TimeLimitTrait.Duration {
    /// Every suite's time limit (`@Suite(…, .timeLimit(.hangGuard))`): a guard that makes a hung test fail as itself,
    /// by name, not a measurement.
    ///
    /// Swift Testing starts the tests of a run together, and a limit counts from its test's start: where the run is
    /// slow, a test lasts about as long as the whole run, however little it does. So the limit exceeds a whole run on
    /// the slowest machine the tests run on, busy: the run takes 6 to 15 minutes on a 2-core VM that other work shares.
    public static var hangGuard: Self { .minutes(30) }
}
