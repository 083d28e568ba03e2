// testTimeout is a global jest option; per-tier budgets are set here instead. 30 s, not jest's 5 s: a loaded
// 2-core machine must not turn a slow unit test into a failure.
jest.setTimeout(30_000);
