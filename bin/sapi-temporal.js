#!/usr/bin/env node
// The `sapi-temporal` command. Runs the compiled CLI (lib/, from `npm run build`); in a source checkout without a
// build it falls back to the TypeScript sources through a transpile-only require hook.
const { existsSync } = require('node:fs');
// The AWS SDK warns on Node 20 about *future* releases; ours are pinned, so the multi-line warning is only noise.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { join } = require('node:path');

// `bin/sapi-temporal` (the shell wrapper) passes `--` first; drop it so commander sees the real arguments.
const argv = process.argv[2] === '--' ? [...process.argv.slice(0, 2), ...process.argv.slice(3)] : process.argv;
const compiled = join(__dirname, '..', 'lib', 'cli', 'index.js');
const sources = join(__dirname, '..', 'src', 'cli', 'index.ts');
// SAPI_TEMPORAL_FROM_SOURCES=1 (the test tiers set it): a checkout's sources even when an older build is in lib/
const fromSources = process.env.SAPI_TEMPORAL_FROM_SOURCES === '1' && existsSync(sources);
if (existsSync(compiled) && !fromSources) {
  require(compiled).main(argv);
} else {
  require('../scripts/ts-register.js');
  require(sources).main(argv);
}
