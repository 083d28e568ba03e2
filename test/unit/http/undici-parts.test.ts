import * as Undici from 'undici';
import { undici, UNDICI_PART_MODULES } from '../../../src/undici-parts';

describe("undici's parts loaded alone are the package's own", () => {
  it('each part is the object the package exports, from the module it is loaded from (not the fallback)', () => {
    /* eslint-disable @typescript-eslint/no-require-imports */
    expect(require(UNDICI_PART_MODULES.Agent)).toBe(Undici.Agent);
    expect(require(UNDICI_PART_MODULES.buildConnector)).toBe(Undici.buildConnector);
    expect(require(UNDICI_PART_MODULES.redirect)).toBe(Undici.interceptors.redirect);
    expect(require(UNDICI_PART_MODULES.Dispatcher)).toBe(Undici.Dispatcher);
    /* eslint-enable @typescript-eslint/no-require-imports */
    expect(undici).toEqual({ Agent: Undici.Agent, buildConnector: Undici.buildConnector, redirect: Undici.interceptors.redirect });
  });
});
