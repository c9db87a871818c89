package jobs

// ExpectedWait is expectedWait, for the tests.
var ExpectedWait = expectedWait
