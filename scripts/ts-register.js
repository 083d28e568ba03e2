// Lets a child process `require` the TypeScript sources directly (node -r ./scripts/ts-register.js x.ts), so
// chaos tests can start and SIGKILL real worker/stack processes without a build step, and threads started from
// the sources load them. Transpile only, no type check. Each transpiled file is cached by its name and contents
// under node_modules/.cache/sapi-temporal-ts (a process or thread that loads the worker's ~100 modules then starts
// in a fraction of the time; the TypeScript compiler is loaded only on a miss).
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const cacheDir = path.join(__dirname, '..', 'node_modules', '.cache', 'sapi-temporal-ts');
let ts;

function transpile(source, filename) {
  ts ??= require('typescript');
  return ts.transpileModule(source, {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      sourceMap: false,
      inlineSourceMap: true,
    },
  }).outputText;
}

require.extensions['.ts'] = function compileTs(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const key = crypto.createHash('sha256').update(filename).update('\0').update(source).digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  let output;
  try {
    output = fs.readFileSync(cached, 'utf8');
  } catch {
    output = transpile(source, filename);
    try {
      // written whole, then renamed: a reader never sees half a file
      fs.mkdirSync(cacheDir, { recursive: true });
      const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      fs.writeFileSync(partial, output);
      fs.renameSync(partial, cached);
    } catch {
      // a cache that cannot be written only costs time
    }
  }
  module._compile(output, filename);
};
