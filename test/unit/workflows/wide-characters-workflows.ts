// A workflow module with characters above U+00FF in a string, a template, a regular expression and a comment → …:
// test/unit/workflows/lean-bundle.test.ts bundles it and checks that the lean bundle keeps their values.
export const WIDE_STRING = 'a → b … c ≤ d 😀 é';
export const WIDE_TEMPLATE = `${WIDE_STRING.length} → ${'≥'}`;
export const WIDE_PATTERN = /^[→…]+😀$/;

export async function wideCharactersWorkflow(): Promise<string> {
  return WIDE_STRING;
}
