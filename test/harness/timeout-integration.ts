// testTimeout is a global jest option; per-tier budgets are set here instead.
jest.setTimeout(120_000);
