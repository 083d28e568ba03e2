/**
 * The plugin's workflow bundle is built lean (src/workflow-bundle.ts): one byte per character, so V8 holds each of the
 * worker's copies of it in half the memory, and a source map of lines without the sources; the same values at run
 * time.
 */
import { runInNewContext } from 'node:vm';
import { resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowsPath } from '../../../src/plugin';
import { LEAN_BUNDLE_DEVTOOL, leanBundleOptions } from '../../../src/workflow-bundle';

jest.setTimeout(120_000);

const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** The inline source map of a bundle (the SDK requires one). */
function sourceMapOf(code: string): { sources: string[]; sourcesContent?: unknown; mappings: string } {
  const at = code.lastIndexOf('//# sourceMappingURL=data:application/json');
  expect(at).toBeGreaterThan(0);
  return JSON.parse(Buffer.from(code.slice(code.indexOf('base64,', at) + 'base64,'.length).trimEnd(), 'base64').toString()) as never;
}

const wideCharacters = (code: string) => [...code].filter((c) => c.charCodeAt(0) > 0xff);

describe('the lean workflow bundle', () => {
  it("holds the plugin's workflows in characters of one byte, with a source map of their TypeScript lines and no sources", async () => {
    const sdkDefault = await bundleWorkflowCode({ workflowsPath, logger: quiet });
    const lean = await bundleWorkflowCode(leanBundleOptions({ workflowsPath, logger: quiet }));
    // the SDK's own bundle of the same workflows: two bytes per character (its comments' → and …), the sources inlined
    expect(wideCharacters(sdkDefault.code).length).toBeGreaterThan(0);
    expect(sourceMapOf(sdkDefault.code).sourcesContent).toBeDefined();

    expect(wideCharacters(lean.code)).toEqual([]);
    const map = sourceMapOf(lean.code);
    expect(map.sourcesContent).toBeUndefined();
    expect(map.sources).toEqual(expect.arrayContaining([expect.stringMatching(/src\/workflows\/import-table\.ts$/)]));
    expect(map.mappings.length).toBeGreaterThan(0);
    expect(lean.code.length).toBeLessThan(sdkDefault.code.length / 2);
  });

  it('keeps the values of strings, templates and regular expressions with characters above U+00FF', async () => {
    const { code } = await bundleWorkflowCode(leanBundleOptions({ workflowsPath: resolve(__dirname, 'wide-characters-workflows.ts'), logger: quiet }));
    expect(wideCharacters(code)).toEqual([]);
    // as the SDK's plain VM runs a bundle: its module cache on the context
    const context: { __TEMPORAL__?: { importWorkflows(): Record<string, unknown> }; __webpack_module_cache__: object } = { __webpack_module_cache__: {} };
    runInNewContext(code, context);
    const module = context.__TEMPORAL__!.importWorkflows();
    expect(module.WIDE_STRING).toBe('a → b … c ≤ d 😀 é');
    expect(module.WIDE_TEMPLATE).toBe('18 → ≥');
    expect((module.WIDE_PATTERN as RegExp).test('→…→😀')).toBe(true);
  });

  it("applies the caller's own webpack hook after the lean settings", async () => {
    const seen: unknown[] = [];
    const { code } = await bundleWorkflowCode(
      leanBundleOptions({
        workflowsPath: resolve(__dirname, 'wide-characters-workflows.ts'),
        logger: quiet,
        webpackConfigHook: (config) => (seen.push(config.devtool), { ...config, devtool: 'inline-source-map' }),
      }),
    );
    expect(seen).toEqual([LEAN_BUNDLE_DEVTOOL]);
    expect(sourceMapOf(code).sourcesContent).toBeDefined();
    expect(wideCharacters(code)).toEqual([]);
  });
});
