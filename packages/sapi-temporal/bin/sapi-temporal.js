#!/usr/bin/env node
// The `sapi-temporal` command of the plugin package: the compiled CLI in lib/ (built by `prepack`).
// The AWS SDK warns on Node 20 about *future* releases; ours are pinned, so the multi-line warning is only noise.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// `bin/sapi-temporal` (the shell wrapper) passes `--` first; drop it so commander sees the real arguments.
const argv = process.argv[2] === '--' ? [...process.argv.slice(0, 2), ...process.argv.slice(3)] : process.argv;
require('../lib/cli/index.js').main(argv);
