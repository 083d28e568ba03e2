// Lets a child process `require` the TypeScript sources directly (node -r ./scripts/ts-register.js x.ts), so
// chaos tests can start and SIGKILL real worker/stack processes without a build step. Transpile only, no type check.
const fs = require('node:fs');
const ts = require('typescript');

require.extensions['.ts'] = function compileTs(module, filename) {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      sourceMap: false,
      inlineSourceMap: true,
    },
  });
  module._compile(outputText, filename);
};
