/** Helpers of the extract workflow tests: configs for the sample API, the plain-loop oracle, table comparisons. */
import { type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { createPageFetcher } from '../../../src/extractor/http/fetch-page';
import { runExtraction, type ExtractionResult } from '../../harness/run-extraction';
import type { RequestDescriptor } from '../../../src/extractor/types';
import type { SampleApi, SampleApiRequest } from '../../../src/sample-api';
import { storageColumnNames } from '../../../src/contracts/extract-plan';
import type { ExtractResult } from '../../../src/contracts/extract';
export { failureOf } from '../../harness/workflow-failure';
import type { SapiTestEnv } from '../../harness/sapi-env';

/** A Generic-Extractor configuration for the sample API. */
export function sampleConfig(api: SampleApi, pagination: unknown, jobs: unknown[], outputBucket?: string): Record<string, unknown> {
  return { parameters: { api: { baseUrl: api.url, pagination }, config: { ...(outputBucket ? { outputBucket } : {}), jobs } } };
}

/** Fast fetcher backoffs for tests. */
export const FAST_FETCH = { baseDelayMs: 5, maxDelayMs: 20 };

/** What the plain in-process loop extracts from the API (the oracle), with the API's request log cleared after. */
export async function plainLoop(api: SampleApi, config: unknown): Promise<ExtractionResult> {
  api.clearRequests();
  const result = await runExtraction(parseExtractorConfig(config), { fetchPage: createPageFetcher(FAST_FETCH) });
  api.clearRequests();
  return result;
}

/** The requests an API saw, one line each: method, URL and body. */
export function requestLines(requests: readonly SampleApiRequest[]): string[] {
  return requests.map((r) => `${r.method} ${r.url}${r.body !== undefined ? ` ${JSON.stringify(r.body)}` : ''}`);
}

/** The oracle's requests in the same one-line form as {@link requestLines}. */
export function descriptorLines(api: SampleApi, descriptors: readonly RequestDescriptor[]): string[] {
  return descriptors.map((d) => {
    const url = d.url.startsWith(api.url) ? `/${d.url.slice(api.url.length)}` : d.url;
    const body = d.body === undefined ? undefined : d.body.kind === 'json' ? d.body.value : Object.fromEntries(new URLSearchParams(d.body.value));
    return `${d.method} ${url}${body !== undefined ? ` ${JSON.stringify(body)}` : ''}`;
  });
}

/** Asserts every table of the oracle is in Storage with the same columns (Storage-safe) and rows, in order. */
export async function expectTablesLike(env: SapiTestEnv, result: ExtractResult, oracle: ExtractionResult): Promise<void> {
  const expected = Object.entries(oracle.tables).filter(([, t]) => t.rows.length > 0);
  expect(result.tables.map((t) => t.name).sort()).toEqual(expected.map(([name]) => name).sort());
  for (const [name, table] of expected) {
    const loaded = result.tables.find((t) => t.name === name)!;
    expect(loaded).toMatchObject({ tableId: `${result.bucketId}.${name}`, rows: table.rows.length, stagedRows: table.rows.length });
    const stored = await env.emulator.readTable(`${result.bucketId}.${name}`);
    expect(stored.columns).toEqual(storageColumnNames(table.columns));
    expect(stored.rows).toEqual(table.rows.map((row) => table.columns.map((c) => row[c] ?? '')));
  }
}

const EventType = temporal.api.enums.v1.EventType;

/** Durations (ms) of the timers a workflow run started. */
export async function timersStarted(handle: WorkflowHandle): Promise<number[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events
    .filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED)
    .map((e) => {
      const d = e.timerStartedEventAttributes?.startToFireTimeout;
      return Number(d?.seconds ?? 0) * 1000 + Math.round((d?.nanos ?? 0) / 1e6);
    });
}

/** Ids (`id` column) of a stored table, sorted. */
export async function storedIds(env: SapiTestEnv, tableId: string): Promise<string[]> {
  const table = await env.emulator.readTable(tableId);
  const idIndex = table.columns.indexOf('id');
  return table.rows.map((r) => r[idIndex]!).sort();
}
