/**
 * The staging activities touch only the asking run's own staging (issue 35, second line of defence): a run key of
 * another workflow id, or of another chain of the same workflow id, is refused with `SAPI_INPUT_FORBIDDEN` before
 * anything is listed, read, written or deleted. Against a local staging folder; the first run id of a continued run
 * comes from a stand-in for the server's describe (the integration tests ask a real server).
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ActivityDeps } from '../../../src/activities/deps';
import { cleanStaging } from '../../../src/activities/extract-clean-staging';
import { buildTableCsv } from '../../../src/activities/extract-build-csv';
import { runIdOfMarker } from '../../../src/activities/ownership';

function staged(): { deps: ActivityDeps; victim: string } {
  const folder = mkdtempSync(join(tmpdir(), 'staging-owner-'));
  mkdirSync(join(folder, 'victim', 'run-v', 'r0000000001', 'p0000000001-0000000001'), { recursive: true });
  const victim = join(folder, 'victim', 'run-v', 'r0000000001', 'p0000000001-0000000001', 'items.jsonl');
  writeFileSync(victim, '{"id":1}\n');
  return { deps: { settings: { stagingUrl: folder }, userS3: () => undefined } as unknown as ActivityDeps, victim };
}

/** A client whose describe answers `firstRunId` for any run (what a server says of a continued run's chain). */
function describing(firstRunId: string, seen: string[] = []): Client {
  return {
    withAbortSignal: <R>(_signal: AbortSignal, fn: () => Promise<R>) => fn(),
    workflowService: {
      describeWorkflowExecution: async (req: { execution: { workflowId: string; runId: string } }) => {
        seen.push(`${req.execution.workflowId}/${req.execution.runId}`);
        return { workflowExecutionInfo: { firstRunId } };
      },
    },
  } as unknown as Client;
}

function env(workflowId: string, runId: string, client?: Client) {
  return new MockActivityEnvironment({ workflowExecution: { workflowId, runId } }, { logger: new DefaultLogger('ERROR'), ...(client ? { client } : {}) });
}

async function refusal(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('staging ownership', () => {
  it("refuses another workflow's staging key before deleting anything", async () => {
    const { deps, victim } = staged();
    const failure = await refusal(env('attacker', 'run-a').run(cleanStaging(deps), { runKey: 'victim/run-v' }));
    expect(failure.type).toBe('SAPI_INPUT_FORBIDDEN');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toMatch(/^runKey: the staging key "victim\/run-v" is not this run's/);
    expect(existsSync(victim)).toBe(true);
  });

  it('refuses a key of the same workflow id from another chain (the id reused after the victim ended)', async () => {
    const { deps, victim } = staged();
    const failure = await refusal(env('victim', 'run-b', describing('run-b')).run(cleanStaging(deps), { runKey: 'victim/run-v' }));
    expect(failure.type).toBe('SAPI_INPUT_FORBIDDEN');
    expect(failure.message).toContain("this run's chain began with run run-b");
    expect(existsSync(victim)).toBe(true);
  });

  it('refuses a key that leaves its folder', async () => {
    const { deps } = staged();
    const failure = await refusal(
      env('attacker', 'run-a').run(buildTableCsv(deps), { runKey: 'attacker/../victim', table: 'items', keys: ['id'], columns: ['id'] }),
    );
    expect(failure.type).toBe('SAPI_INPUT_FORBIDDEN');
  });

  it('lets a run use its own key: the first run without asking the server, a continued run once it asked', async () => {
    const { deps, victim } = staged();
    expect(await env('victim', 'run-v').run(cleanStaging(deps), { runKey: 'victim/run-v' })).toMatchObject({ removed: 1 });
    expect(existsSync(victim)).toBe(false);
    const seen: string[] = [];
    const { deps: again } = staged();
    expect(await env('victim', 'run-v2', describing('run-v', seen)).run(cleanStaging(again), { runKey: 'victim/run-v' })).toMatchObject({ removed: 1 });
    expect(seen).toEqual(['victim/run-v2']);
  });

  it('reads the workflow run id out of the markers the activities send', () => {
    expect(runIdOfMarker('sapi-temporal.0f0e-11.3')).toBe('0f0e-11');
    expect(runIdOfMarker('sapi-temporal.0f0e-11')).toBeUndefined();
    expect(runIdOfMarker('other.0f0e.3')).toBeUndefined();
    expect(runIdOfMarker(null)).toBeUndefined();
  });
});
