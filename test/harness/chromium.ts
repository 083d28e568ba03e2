import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket } from 'undici';
import { ManagedProcess } from '../../src/dev/process';

/** Names a Debian/Ubuntu (or Chrome) install puts on PATH, in the order we try them. */
const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

/**
 * The Chromium binary: `SAPI_CHROMIUM_BIN`, else the first of {@link CHROMIUM_NAMES} on PATH. Throws a message that
 * says how to install it when there is none.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.SAPI_CHROMIUM_BIN;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`SAPI_CHROMIUM_BIN=${fromEnv} does not exist; unset it or point it at a Chromium binary`);
    return fromEnv;
  }
  for (const name of CHROMIUM_NAMES) {
    for (const dir of (env.PATH ?? '').split(delimiter)) {
      if (dir && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  throw new Error(
    `Chromium not found (looked at $SAPI_CHROMIUM_BIN and ${CHROMIUM_NAMES.join(', ')} on PATH): this test opens the Temporal UI in ` +
      'a real headless browser. Install it with `make tools` (scripts/install-tools.sh runs `apt-get install -y chromium`), ' +
      'or `sudo apt-get update && sudo apt-get install -y chromium`, or set SAPI_CHROMIUM_BIN',
  );
}

/** One HTTP exchange the page made, as the DevTools protocol reported it. */
export interface PageRequest {
  method: string;
  url: string;
  /** HTTP status; absent when the request failed (`error` says why, e.g. a CORS refusal). */
  status?: number;
  error?: string;
}

/** A page of a headless Chromium driven over the DevTools protocol. */
export interface HeadlessPage {
  /** Navigates and forgets the requests of the previous page. */
  open(url: string): Promise<void>;
  /** `document.body.innerText` of the rendered page ('' before the body exists); not the text of its frames. */
  text(): Promise<string>;
  /**
   * The text of the page's same-origin frames (`<iframe>`s), by frame id (else title): the Temporal UI renders
   * markdown (a run's summary, details, current details) in a frame of its own, whose text `text()` does not hold.
   */
  frames(): Promise<Record<string, string>>;
  /** Writes a PNG of the page as it is rendered now (for a person looking into a failure). */
  screenshot(path: string): Promise<void>;
  /** Requests the page made since `open`, in order. */
  requests(): PageRequest[];
  /** Polls `check` every 250 ms until it returns true; on timeout throws `what` with the page's text for diagnosis. */
  waitFor(what: string, check: (text: string, requests: PageRequest[]) => boolean, timeoutMs?: number): Promise<string>;
}

export interface HeadlessChromium {
  page: HeadlessPage;
  close(): Promise<void>;
}

interface CdpMessage {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
}

/**
 * Starts headless Chromium (own profile under `dataDir`, DevTools on a free port: Chromium writes the port to
 * `DevToolsActivePort`) and attaches to its first page over the DevTools protocol, with Node's own fetch and
 * undici's WebSocket: no browser-automation package needed.
 */
export async function launchChromium(dataDir: string): Promise<HeadlessChromium> {
  const binary = findChromium();
  const profile = join(dataDir, 'profile');
  mkdirSync(profile, { recursive: true });
  const portFile = join(profile, 'DevToolsActivePort');
  const chromium = await ManagedProcess.start({
    name: 'chromium',
    command: binary,
    args: [
      '--headless',
      '--no-sandbox', // root in a container: Chromium's sandbox needs user namespaces it does not get
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-extensions',
      // this machine's network is closed: no background, update, sync or QUIC connections to be refused
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      `--user-data-dir=${profile}`,
      '--remote-debugging-address=127.0.0.1',
      '--remote-debugging-port=0',
      'about:blank',
    ],
    logFile: join(dataDir, 'chromium.log'),
    healthTimeoutMs: 30_000,
    healthy: async () => existsSync(portFile) && readFileSync(portFile, 'utf8').includes('\n'),
  });
  let socket: WebSocket | undefined;
  try {
    const port = Number(readFileSync(portFile, 'utf8').split('\n')[0]);
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ type: string; webSocketDebuggerUrl: string }>;
    const target = targets.find((candidate) => candidate.type === 'page');
    if (!target) throw new Error(`chromium on port ${port} has no page target: ${JSON.stringify(targets)}`);
    const ws = new WebSocket(target.webSocketDebuggerUrl);
    socket = ws;
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve());
      ws.addEventListener('error', () => reject(new Error(`cannot open the DevTools socket ${target.webSocketDebuggerUrl}`)));
    });

    let nextId = 0;
    const pending = new Map<number, { resolve: (result: Record<string, unknown>) => void; reject: (err: Error) => void }>();
    let requests = new Map<string, PageRequest>();
    ws.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as CdpMessage;
      if (message.id !== undefined) {
        const waiter = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) waiter?.reject(new Error(`DevTools: ${message.error.message}`));
        else waiter?.resolve(message.result ?? {});
        return;
      }
      const params = message.params ?? {};
      const requestId = String(params.requestId);
      if (message.method === 'Network.requestWillBeSent') {
        const request = params.request as { method: string; url: string };
        requests.set(requestId, { method: request.method, url: request.url });
      } else if (message.method === 'Network.responseReceived') {
        const known = requests.get(requestId);
        if (known) known.status = (params.response as { status: number }).status;
      } else if (message.method === 'Network.loadingFailed') {
        const known = requests.get(requestId);
        if (known) known.error = String(params.errorText) + (params.corsErrorStatus ? ` (CORS: ${JSON.stringify(params.corsErrorStatus)})` : '');
      }
    });
    const send = (method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> =>
      new Promise((resolve, reject) => {
        const id = ++nextId;
        pending.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params }));
      });
    await send('Network.enable');
    await send('Page.enable');

    const page: HeadlessPage = {
      async open(url) {
        requests = new Map();
        const answer = await send('Page.navigate', { url });
        if (answer.errorText) throw new Error(`chromium could not open ${url}: ${String(answer.errorText)}`);
      },
      async text() {
        const answer = await send('Runtime.evaluate', { expression: 'document.body ? document.body.innerText : ""', returnByValue: true });
        return String((answer.result as { value?: unknown } | undefined)?.value ?? '');
      },
      async frames() {
        const expression = `JSON.stringify(Object.fromEntries([...document.querySelectorAll('iframe')].map((frame, i) => {
          let text = '';
          try { text = frame.contentDocument && frame.contentDocument.body ? frame.contentDocument.body.innerText : ''; } catch (err) { text = ''; }
          return [frame.id || frame.title || String(i), text];
        })))`;
        const answer = await send('Runtime.evaluate', { expression, returnByValue: true });
        return JSON.parse(String((answer.result as { value?: unknown } | undefined)?.value ?? '{}')) as Record<string, string>;
      },
      async screenshot(path) {
        const answer = await send('Page.captureScreenshot', { format: 'png' });
        writeFileSync(path, Buffer.from(String(answer.data), 'base64'));
      },
      requests: () => [...requests.values()],
      async waitFor(what, check, timeoutMs = 30_000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const text = await page.text();
          if (check(text, page.requests())) return text;
          if (Date.now() > deadline) {
            const seen = page.requests().map((r) => `${r.method} ${r.url} → ${r.status ?? r.error ?? 'pending'}`);
            throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; page text:\n${text.slice(0, 3000)}\nrequests:\n${seen.join('\n')}`);
          }
          await sleep(250);
        }
      },
    };
    return {
      page,
      async close() {
        ws.close();
        await chromium.stop();
      },
    };
  } catch (err) {
    socket?.close();
    await chromium.stop();
    throw err;
  }
}
