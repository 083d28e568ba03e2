/**
 * The parts of undici a worker's main thread uses — `Agent`, `buildConnector`, the redirect interceptor, and the
 * request API (`request`, `stream`, `pipeline`, `connect`, `upgrade`) on every dispatcher — loaded from their own
 * modules instead of the whole package, whose entry also loads fetch, WebSocket, EventSource, the HTTP caches and the
 * mock agents: ~1.8 MB of V8 heap instead of ~4.6 MB, kept for the worker's life. Each part is the package's own
 * object (a unit test checks it), so `instanceof` and undici's errors are as with `import … from 'undici'`. If a later
 * undici moves a module, the whole package is the fallback.
 */
import type * as Undici from 'undici';

/** undici's modules of each part, within the pinned `undici` package (it has no `exports` map). */
export const UNDICI_PART_MODULES = {
  Agent: 'undici/lib/dispatcher/agent.js',
  Dispatcher: 'undici/lib/dispatcher/dispatcher.js',
  api: 'undici/lib/api/index.js',
  buildConnector: 'undici/lib/core/connect.js',
  redirect: 'undici/lib/interceptor/redirect.js',
} as const;

export interface UndiciParts {
  Agent: typeof Undici.Agent;
  buildConnector: typeof Undici.buildConnector;
  redirect: typeof Undici.interceptors.redirect;
}

function load(): UndiciParts {
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const dispatcher = require(UNDICI_PART_MODULES.Dispatcher) as typeof Undici.Dispatcher;
    // what undici's entry does when loaded (and does again, harmlessly, if something loads it later): the request API
    // on the base class of every dispatcher; `dispatcher.request(…)` is not there without it
    Object.assign(dispatcher.prototype, require(UNDICI_PART_MODULES.api));
    return {
      Agent: require(UNDICI_PART_MODULES.Agent) as typeof Undici.Agent,
      buildConnector: require(UNDICI_PART_MODULES.buildConnector) as typeof Undici.buildConnector,
      redirect: require(UNDICI_PART_MODULES.redirect) as typeof Undici.interceptors.redirect,
    };
  } catch {
    const undici = require('undici') as typeof Undici;
    /* eslint-enable @typescript-eslint/no-require-imports */
    return { Agent: undici.Agent, buildConnector: undici.buildConnector, redirect: undici.interceptors.redirect };
  }
}

/** undici's `Agent`, `buildConnector` and `interceptors.redirect`, and its request API on every dispatcher. */
export const undici: UndiciParts = load();
