/**
 * Issue 35: someone who can only start workflows passes forged run state (`resume`) in the public input, as
 * `temporal workflow start --type … --input '…'` sends it (the raw shape, no typed helper), and through the Nexus
 * service. Each forgery names another run's staging, file, table or bucket; each is refused with
 * `SAPI_INPUT_FORBIDDEN` (by the workflow up front, or by the activity that would have touched the object: the second
 * line of defence), and the victim's staging, table, file and bucket are left as they were; the victim extraction,
 * resumed, loads exactly its own rows.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { request } from 'undici';
import { stagingRunKey } from '../../../src/contracts/extract-plan';
import type { ExtractProgress, ExtractResult } from '../../../src/contracts/extract';
import type { ImportTableResult } from '../../../src/contracts/transfer';
import { createSampleApi, largePage, largeRecordCount, type SampleApi } from '../../../src/sample-api';
import { eventually } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack, uniqueTaskQueue } from '../../harness/stack-state';
import { failureOf } from '../../harness/workflow-failure';
import { continuedRuns } from '../../harness/continued-run';

jest.setTimeout(300_000);

const FORBIDDEN = 'SAPI_INPUT_FORBIDDEN';
const FAST = { fetch: { baseDelayMs: 5, maxDelayMs: 20 }, polling: { initialMs: 200, maxMs: 1000 } };
const LARGE = { method: 'response.param', responseParam: 'next_page', queryParam: 'page' };
const VICTIM_PAGES = 400;
const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const EventType = temporal.api.enums.v1.EventType;

/** Who refused a forged run and how: the workflow itself, or the named activity (its failure in the history). */
interface Refusal {
  by: string;
  type: string;
  message: string;
}

/** Every file under `dir` (relative path → content): the victim's staging, compared before and after. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  if (!existsSync(dir)) return files;
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else files[relative(dir, path)] = readFileSync(path, 'utf8');
    }
  };
  walk(dir);
  return files;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

describe('forged run state in a public input', () => {
  const stack = testStack();
  const suffix = Date.now().toString(36);
  let env: SapiTestEnv;
  let victimApi: SampleApi;
  let evilApi: SampleApi;
  let n = 0;
  /** Before/after of each forgery, printed at the end (the issue's note). */
  const notes: string[] = [];

  beforeAll(async () => {
    [env, victimApi, evilApi] = await Promise.all([
      startSapiTestEnv('forged', { env: { SAPI_NEXUS_SERVICE: 'true' } }),
      createSampleApi({ largePages: VICTIM_PAGES }),
      createSampleApi({ records: 20, pageSize: 10 }),
    ]);
    evilApi.setDataset(Array.from({ length: 20 }, (_, i) => ({ id: `EVIL-${i + 1}`, page: 0, value: 666, even: false })));
  });
  afterAll(async () => {
    console.log(`forged run state, outcomes:\n${notes.map((line) => `- ${line}`).join('\n')}`);
    await Promise.all([victimApi?.close(), evilApi?.close()]);
    await env?.stop();
  });

  const id = (name: string) => `forged-${name}-${suffix}-${++n}`;
  const victimConfig = (bucket: string) => ({
    parameters: {
      api: { baseUrl: victimApi.url, pagination: LARGE },
      config: { outputBucket: bucket, jobs: [{ endpoint: 'large/items', dataField: 'items' }] },
    },
  });
  const evilConfig = () => ({
    parameters: {
      api: { baseUrl: evilApi.url, pagination: { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' } },
      config: { outputBucket: 'evil', jobs: [{ endpoint: 'cursor/items', dataType: 'large_items' }] },
    },
  });

  /** Starts a workflow with a plain JSON input, as `temporal workflow start --input` does. */
  function startRaw(type: 'extractWorkflow' | 'importTableWorkflow', name: string, input: Record<string, unknown>): Promise<WorkflowHandle> {
    return env.client.workflow.start(type, { taskQueue: env.taskQueue, workflowId: id(name), args: [input] });
  }

  /** A checkpoint as an attacker writes it: the victim's staging key (its workflow id and first run id, as `temporal workflow list` shows them). */
  function forgedCheckpoint(runKey: string, overrides: Record<string, unknown>): Record<string, unknown> {
    return {
      v: 1,
      runKey,
      runId: runKey.split('/')[1],
      runs: 1,
      nextJob: 1,
      nextRunNo: 2,
      frames: [],
      schema: { large_items: ['id', 'page', 'value', 'even'] },
      rows: { large_items: 200 },
      pages: 0,
      records: 0,
      bytes: 0,
      warnings: [],
      warningsDropped: 0,
      stopReasons: {},
      paused: false,
      ...overrides,
    };
  }

  /** The refusal of a forged run: an activity's (its failure in the history: the second line of defence), or else the workflow's own. */
  async function refusalOf(handle: WorkflowHandle): Promise<Refusal> {
    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const events = (await handle.fetchHistory()).events ?? [];
    const scheduled = new Map(
      events
        .filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
        .map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes?.activityType?.name ?? '?']),
    );
    for (const e of events) {
      const failed = e.activityTaskFailedEventAttributes;
      const type = failed?.failure?.applicationFailureInfo?.type;
      if (failed && type === FORBIDDEN)
        return { by: `activity ${scheduled.get(String(failed.scheduledEventId)) ?? '?'}`, type, message: failed.failure?.message ?? '' };
    }
    for (let cause = (err as WorkflowFailedError).cause as Error | undefined; cause; cause = (cause as Error & { cause?: Error }).cause) {
      if (cause instanceof ApplicationFailure && cause.type === FORBIDDEN) return { by: 'workflow', type: cause.type, message: cause.message };
    }
    throw new Error(`the forged run failed without a ${FORBIDDEN} refusal: ${(err as Error).message}`);
  }

  describe('against a paused extraction', () => {
    let victim: WorkflowHandle & { firstExecutionRunId: string };
    let runKey: string;
    let staging: string;
    let staged: Record<string, string>;

    beforeAll(async () => {
      victim = await env.client.workflow.start('extractWorkflow', {
        taskQueue: env.taskQueue,
        workflowId: id('victim'),
        args: [{ config: victimConfig('victim'), options: { ...FAST, mode: 'batch', batchPages: 5 } }],
      });
      await eventually(() => victimApi.requests.length >= 10, 30_000, 'the victim fetched no pages');
      await victim.executeUpdate('pause');
      await eventually(async () => (await victim.query<ExtractProgress>('progress')).phase === 'paused', 30_000, 'the victim never paused');
      runKey = stagingRunKey(victim.workflowId, victim.firstExecutionRunId);
      // the activities check a continued run's chain by the first run id the server reports (else the workflow id only)
      expect((await victim.describe()).raw.workflowExecutionInfo?.firstRunId).toBe(victim.firstExecutionRunId);
      staging = join(env.dataDir, 'work', 'staging', ...runKey.split('/'));
      staged = snapshot(staging);
      expect(Object.keys(staged).length).toBeGreaterThan(0);
    });

    afterEach(() => {
      // whatever the forgery, the victim's staging is exactly as it was
      expect(snapshot(staging)).toEqual(staged);
    });

    it("refuses a run that would load the victim's staged pages into its own table", async () => {
      const thief = await startRaw('extractWorkflow', 'read', { config: victimConfig('thief'), options: FAST, resume: forgedCheckpoint(runKey, {}) });
      const refusal = await refusalOf(thief);
      expect(refusal.type).toBe(FORBIDDEN);
      expect(refusal.message).toMatch(/resume|runKey/); // the field: the workflow's `resume`, or the activity's `runKey`
      await expect(env.emulator.readTable('in.c-thief.large_items')).rejects.toThrow();
      notes.push(
        `extraction read of a paused victim's staging: refused by ${refusal.by} (${refusal.type}: ${refusal.message.slice(0, 160)}); in.c-thief.large_items not created; victim staging unchanged (${Object.keys(staged).length} objects)`,
      );
    });

    it("refuses a run whose clean-up would delete the victim's staging", async () => {
      const wiper = await startRaw('extractWorkflow', 'wipe', {
        config: victimConfig('wiper'),
        options: FAST,
        resume: forgedCheckpoint(runKey, { schema: {}, rows: {} }),
      });
      const refusal = await refusalOf(wiper);
      expect(refusal.type).toBe(FORBIDDEN);
      notes.push(`extraction clean-up of a paused victim's staging: refused by ${refusal.by} (${refusal.type}); victim staging unchanged`);
    });

    it("refuses a run that would stage rows into the victim's staging (load: false)", async () => {
      evilApi.clearRequests();
      const injector = await startRaw('extractWorkflow', 'inject', {
        config: evilConfig(),
        options: { ...FAST, load: false },
        resume: forgedCheckpoint(runKey, { nextJob: 0, nextRunNo: 2, schema: {}, rows: {} }),
      });
      const refusal = await refusalOf(injector);
      expect(refusal.type).toBe(FORBIDDEN);
      // refused before the evil API was asked for a page
      expect(evilApi.requests).toEqual([]);
      notes.push(
        `inject with load: false into a paused victim's staging: refused by ${refusal.by} (${refusal.type}); the evil API saw 0 requests; victim staging unchanged`,
      );
    });

    it('refuses the same forgeries through the Nexus service, starting no workflow', async () => {
      const { caller, endpoint, callerQueue, stop } = await nexusCaller();
      try {
        const forged = { config: victimConfig('nexus-thief'), options: FAST, resume: forgedCheckpoint(runKey, {}) };
        const failure = await failureOf(
          caller.workflow.execute('extractThroughNexus', { taskQueue: callerQueue, workflowId: id('nexus-extract'), args: [endpoint, forged] }),
        );
        expect(failure.type).toBe(FORBIDDEN);
        expect(failure.message).toMatch(/^resume: internal run state/);
        const importFailure = await failureOf(
          caller.workflow.execute('importThroughNexus', {
            taskQueue: callerQueue,
            workflowId: id('nexus-import'),
            args: [
              endpoint,
              { source: 'x.csv', bucketId: 'in.c-victim', table: 't', resume: { fileId: 1, bytes: 1, job: { id: 1, status: 'error' }, createdBucket: true } },
            ],
          }),
        );
        expect(importFailure.type).toBe(FORBIDDEN);
        const started = await collect(env.client.workflow.list({ query: `TaskQueue="${env.taskQueue}" AND WorkflowId STARTS_WITH "nexus-"` }));
        expect(started).toEqual([]);
        notes.push(
          `the same through the Nexus service (extract and importTable with resume): refused by the handler (${failure.type}: ${failure.message.slice(0, 120)}); no workflow started`,
        );
      } finally {
        await stop();
      }
    });

    it("refuses the forgery from a genuine continue-as-new of the attacker's own workflow into extractWorkflow", async () => {
      // continuedFromExecutionRunId is set on such a run: only the chain's first run id tells it from the victim's chain
      const chain = await continuedRuns(env);
      try {
        const attackerId = id('chained');
        const attackerFirstRun = await chain.begin(attackerId);
        const handle = await chain.continueWith(attackerId, 'extractWorkflow', {
          config: victimConfig('chained'),
          options: FAST,
          resume: forgedCheckpoint(runKey, {}),
        });
        const refusal = await refusalOf(handle);
        expect(refusal.type).toBe(FORBIDDEN);
        await expect(env.emulator.readTable('in.c-chained.large_items')).rejects.toThrow();
        notes.push(
          `the read forgery from a continue-as-new of the attacker's own workflow (chain begun by run ${attackerFirstRun}) into extractWorkflow: refused by ${refusal.by} (${refusal.type}); victim staging unchanged`,
        );
      } finally {
        await chain.stop();
      }
    });

    it('the victim, resumed, loads exactly its own rows', async () => {
      await victim.executeUpdate('resume');
      const result = (await victim.result()) as ExtractResult;
      expect(result.pages).toBe(VICTIM_PAGES);
      const table = await env.emulator.readTable('in.c-victim.large_items');
      const ids = table.rows.map((r) => r[table.columns.indexOf('id')]).sort();
      const expected = Array.from({ length: VICTIM_PAGES }, (_, i) => largePage(i + 1).map((r) => r.id))
        .flat()
        .sort();
      expect(table.rows).toHaveLength(largeRecordCount(VICTIM_PAGES));
      expect(ids).toEqual(expected);
      staged = {}; // the victim removed its own staging after loading
      expect(result.staging).toEqual({ removed: expect.any(Number) });
      notes.push(
        `the victim, resumed: ${table.rows.length} rows of ${largeRecordCount(VICTIM_PAGES)} (${VICTIM_PAGES} pages), no EVIL rows, ids exactly its own`,
      );
    });
  });

  it("refuses a run that reuses an ended extraction's workflow id to read its staging (load: false kept it)", async () => {
    const ended = await env.client.workflow.start('extractWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: id('ended'),
      args: [{ config: evilConfig(), options: { ...FAST, load: false } }],
    });
    const result = (await ended.result()) as ExtractResult;
    expect(result.staging).toEqual({ kept: true });
    const endedKey = stagingRunKey(ended.workflowId, ended.firstExecutionRunId);
    const endedStaging = join(env.dataDir, 'work', 'staging', ...endedKey.split('/'));
    const before = snapshot(endedStaging);
    expect(Object.keys(before).length).toBeGreaterThan(0);
    // the same workflow id (free again once the run ended): the staging key's workflow part matches, its run part does not
    const reuser = await env.client.workflow.start('extractWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: ended.workflowId,
      args: [{ config: victimConfig('reuse'), options: FAST, resume: forgedCheckpoint(endedKey, { rows: { large_items: 20 } }) }],
    });
    const refusal = await refusalOf(reuser);
    expect(refusal.type).toBe(FORBIDDEN);
    await expect(env.emulator.readTable('in.c-reuse.large_items')).rejects.toThrow();
    expect(snapshot(endedStaging)).toEqual(before);
    notes.push(
      `a run reusing an ended extraction's workflow id with its staging key: refused by ${refusal.by} (${refusal.type}: ${refusal.message.slice(0, 200)}); in.c-reuse.large_items not created; the ended run's staging unchanged (${Object.keys(before).length} objects)`,
    );
  });

  describe("against another run's import", () => {
    async function api<T>(method: 'GET', path: string): Promise<{ status: number; body: T }> {
      const res = await request(`${env.emulator.url}/v2/storage/${path}`, { method, headers: { 'x-storageapi-token': env.emulator.token } });
      return { status: res.statusCode, body: (await res.body.json()) as T };
    }

    let source: string;
    let victim: ImportTableResult;
    let failedJob: { id: number; status: string };
    const victimState = async () => ({
      rows: (await env.emulator.readTable('in.c-victim-import.t').catch(() => ({ rows: [] }))).rows,
      file: (await api('GET', `files/${victim.fileId}`)).status,
      bucket: (await api('GET', 'buckets/in.c-victim-import')).status,
    });
    const forgedImport = () => ({
      source,
      bucketId: 'in.c-victim-import',
      table: 't',
      polling: FAST.polling,
      resume: { fileId: victim.fileId, bytes: 1, job: { id: failedJob.id, status: 'processing' }, createdBucket: true, createdTable: true, typed: false },
    });

    beforeAll(async () => {
      source = join(env.dataDir, 'victim.csv');
      writeFileSync(source, 'id,name\n1,a\n2,b\n3,c\n');
      victim = (await env.client.workflow.execute('importTableWorkflow', {
        taskQueue: env.taskQueue,
        workflowId: id('victim-import'),
        args: [{ source, bucketId: 'in.c-victim-import', createBucket: true, table: 't', polling: FAST.polling }],
      })) as ImportTableResult;
      // a failed job the forged run can point at (any run's: job ids are listed to every token of the project)
      const ragged = join(env.dataDir, 'ragged.csv');
      writeFileSync(ragged, 'a,b\n1\n');
      await failureOf(
        env.client.workflow.execute('importTableWorkflow', {
          taskQueue: env.taskQueue,
          workflowId: id('failing'),
          args: [{ source: ragged, bucketId: 'in.c-victim-import', table: 'other', polling: FAST.polling }],
        }),
      );
      failedJob = (await api<Array<{ id: number; status: string }>>('GET', 'jobs')).body.find((j) => j.status === 'error')!;
      expect(failedJob).toBeDefined();
    });

    afterEach(async () => {
      // whatever the forgery, the victim's table, file and bucket are as they were
      expect(await victimState()).toEqual({
        rows: [
          ['1', 'a'],
          ['2', 'b'],
          ['3', 'c'],
        ],
        file: 200,
        bucket: 200,
      });
    });

    it("refuses the clean-up of a forged import that would delete the victim's table, file and bucket", async () => {
      const refusal = await refusalOf(await startRaw('importTableWorkflow', 'delete', forgedImport()));
      expect(refusal.type).toBe(FORBIDDEN);
      const after = await victimState();
      notes.push(
        `import clean-up with a forged resume (victim's file ${victim.fileId}, createdBucket and createdTable): refused by ${refusal.by} (${refusal.type}: ${refusal.message.slice(0, 200)}); victim table rows ${after.rows.length}, file ${after.file}, bucket ${after.bucket} (unchanged)`,
      );
    });

    it("refuses it from a genuine continue-as-new of the attacker's own workflow into importTableWorkflow", async () => {
      const chain = await continuedRuns(env);
      try {
        const attackerId = id('chained-import');
        await chain.begin(attackerId);
        const refusal = await refusalOf(await chain.continueWith(attackerId, 'importTableWorkflow', forgedImport()));
        expect(refusal.type).toBe(FORBIDDEN);
        notes.push(
          `the same import forgery from a continue-as-new of the attacker's own workflow into importTableWorkflow: refused by ${refusal.by} (${refusal.type}); victim table, file and bucket unchanged`,
        );
      } finally {
        await chain.stop();
      }
    });
  });

  /** A caller namespace and a Nexus endpoint targeting this env's worker (which serves the service), with the caller's worker. */
  async function nexusCaller(): Promise<{ caller: Client; endpoint: string; callerQueue: string; stop(): Promise<void> }> {
    const callerNamespace = `forged-caller-${suffix}`;
    const endpoint = `forged-${suffix}`;
    const callerQueue = uniqueTaskQueue('forged-caller');
    const connection = await Connection.connect({ address: stack.temporalAddress });
    await connection.workflowService.registerNamespace({ namespace: callerNamespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    await connection.operatorService.createNexusEndpoint({
      spec: { name: endpoint, target: { worker: { namespace: stack.namespace, taskQueue: env.taskQueue } } },
    });
    const caller = new Client({ connection, namespace: callerNamespace });
    const workflowBundle = await bundleWorkflowCode({ workflowsPath: resolve(__dirname, '../../harness/nexus-caller-workflows.ts'), logger: quiet });
    const workerConnection = await NativeConnection.connect({ address: stack.temporalAddress });
    let worker: Worker | undefined;
    await eventually(
      async () => {
        worker = await Worker.create({ connection: workerConnection, namespace: callerNamespace, taskQueue: callerQueue, workflowBundle }).catch(
          () => undefined,
        );
        return worker !== undefined;
      },
      60_000,
      'the caller namespace is served',
    );
    const running = worker!.run();
    return {
      caller,
      endpoint,
      callerQueue,
      async stop() {
        worker!.shutdown();
        await running;
        await workerConnection.close();
        await connection.close();
      },
    };
  }
});
