package jobs

// RetryAfterOf is retryAfterOf, for the tests.
var RetryAfterOf = retryAfterOf
