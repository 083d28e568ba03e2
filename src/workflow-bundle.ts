/**
 * How the plugin's workflow bundle is built: lean, because a worker holds it several times over for its whole life (the
 * code string in the worker options, the script the SDK compiles once on the main thread, the workflow thread's copy
 * and its source-map consumer). The SDK's default bundle is a two-byte string (one `→` or `…` in a comment makes V8
 * store every character in 2 bytes) with an inline source map carrying every module's source: 3.1 M characters, 6.2 MB
 * per copy for the plugin's workflows. Lean: ASCII only (other characters escaped, `\u2192`) and a source map of lines
 * without the sources (stack traces still name the TypeScript file and line): 1.2 MB per copy. The sources only
 * served the enhanced stack-trace query of a worker with `showStackTraceSources` (off by default): such a worker
 * answers it without them; a caller's own `webpackConfigHook` can set `devtool: 'inline-source-map'` back.
 */
import type { BundleOptions } from '@temporalio/worker';

type WebpackConfig = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];
type WebpackPlugin = Exclude<NonNullable<WebpackConfig['plugins']>[number], false | '' | 0 | null | undefined | ((...args: never[]) => unknown)>;
type Compiler = Parameters<WebpackPlugin['apply']>[0];

/**
 * The source map of a lean bundle: inline (the SDK requires one), lines of the original TypeScript (`cheap-module`),
 * no `sourcesContent` (`nosources`).
 */
export const LEAN_BUNDLE_DEVTOOL = 'inline-nosources-cheap-module-source-map';

/**
 * `options` with the lean bundle's webpack settings (see the module's comment) applied before the caller's own
 * `webpackConfigHook`, which may override them. Used by `SapiPlugin.configureBundler` (a worker given `workflowsPath`,
 * and a bundle prebuilt with `bundleWorkflowCode({ workflowsPath, plugins: [plugin] })`), by `replayCheck`, and by the
 * tests' and the bench's bundles of the plugin's workflows.
 */
export function leanBundleOptions<T extends BundleOptions | Partial<BundleOptions>>(options: T): T {
  const theirs = options.webpackConfigHook;
  return { ...options, webpackConfigHook: (config: WebpackConfig) => (theirs ? theirs(leanWebpackConfig(config)) : leanWebpackConfig(config)) };
}

/** The SDK's webpack configuration with the lean source map and the ASCII-only output. */
function leanWebpackConfig(config: WebpackConfig): WebpackConfig {
  return { ...config, devtool: LEAN_BUNDLE_DEVTOOL, plugins: [...(config.plugins ?? []), asciiOnlyOutput] };
}

const PLUGIN_NAME = 'sapi-temporal-ascii-only';

/**
 * Escapes every character above U+00FF of the emitted JavaScript as `\uXXXX` (the same character in a string, a
 * template, a regular expression or an identifier; in a comment, no matter), before the source map is made
 * (`ReplaceSource` keeps the mapping), so V8 can hold the bundle as a one-byte string. Characters outside the BMP
 * come as two surrogates, each escaped: the same string. (webpack is the SDK's, reached through the compiler.)
 */
const asciiOnlyOutput: WebpackPlugin = {
  apply(compiler: Compiler) {
    const { Compilation, sources } = compiler.webpack;
    compiler.hooks.thisCompilation.tap(PLUGIN_NAME, (compilation) => {
      compilation.hooks.processAssets.tap({ name: PLUGIN_NAME, stage: Compilation.PROCESS_ASSETS_STAGE_OPTIMIZE_COMPATIBILITY }, (assets) => {
        for (const [name, asset] of Object.entries(assets)) {
          if (!name.endsWith('.js')) continue;
          const text = asset.source().toString();
          const wide = /[\u0100-\uffff]/g;
          let escaped: InstanceType<typeof sources.ReplaceSource> | undefined;
          for (let match = wide.exec(text); match; match = wide.exec(text)) {
            escaped ??= new sources.ReplaceSource(asset);
            escaped.replace(match.index, match.index, `\\u${match[0].charCodeAt(0).toString(16).padStart(4, '0')}`);
          }
          if (escaped) compilation.updateAsset(name, escaped);
        }
      });
    });
  },
};
