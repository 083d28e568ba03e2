// The workflow tier: workflows on the time-skipping test server with fake activities; hours of workflow time pass in
// moments, so a test that takes long is stuck, not slow.
jest.setTimeout(60_000);
