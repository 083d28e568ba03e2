import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, CancelledFailure, NamespaceNotFoundError, TimeoutFailure } from '@temporalio/common';
import { CliError, describeFailure, rootFailure } from '../../../src/cli/failure';

const workflowFailed = (cause: Error) => new WorkflowFailedError('Workflow execution failed', cause, 'NON_RETRYABLE_FAILURE');
const activityFailed = (activityType: string, cause: Error) =>
  new ActivityFailure('Activity task failed', activityType, '7', 'NON_RETRYABLE_FAILURE', 'worker@host', cause);

describe('the CLI failure line', () => {
  it("names the failure type and the job error of a failed Storage job, not Temporal's wrapper, with the workflow id", () => {
    const job = ApplicationFailure.nonRetryable('Storage job 12 (tableCreate on in.c-a.t) failed: unclosed quote on line 3', 'SAPI_JOB_FAILED');
    expect(describeFailure(workflowFailed(job), 'import', 'import-in.c-a.t-x1')).toBe(
      'import failed [SAPI_JOB_FAILED] Storage job 12 (tableCreate on in.c-a.t) failed: unclosed quote on line 3 (workflow import-in.c-a.t-x1)',
    );
  });

  it('unwraps an activity failure down to the application failure and names the activity', () => {
    const cause = ApplicationFailure.nonRetryable('GET /v2/storage/buckets/in.c-nope failed: 404', 'SAPI_NOT_FOUND');
    const line = describeFailure(workflowFailed(activityFailed('ensureBucket', cause)), 'import', 'wf-1');
    expect(line).toBe('import failed [SAPI_NOT_FOUND] GET /v2/storage/buckets/in.c-nope failed: 404 (activity ensureBucket, workflow wf-1)');
    expect(line).not.toMatch(/Activity task failed|Workflow execution failed/);
  });

  it('reports timeouts and cancellations by kind', () => {
    const timeout = new TimeoutFailure('activity Heartbeat timeout', undefined, 'HEARTBEAT');
    expect(rootFailure(workflowFailed(activityFailed('uploadFile', timeout)))).toEqual({
      type: 'TIMEOUT_HEARTBEAT',
      message: 'activity Heartbeat timeout',
      activity: 'uploadFile',
    });
    expect(rootFailure(workflowFailed(new CancelledFailure('Workflow cancelled'))).type).toBe('CANCELLED');
  });

  it('keeps a multi-line cause on one line', () => {
    const cause = ApplicationFailure.nonRetryable('invalid import input:\n  bucketId must look like in.c-name', 'SAPI_INVALID_INPUT');
    const line = describeFailure(workflowFailed(cause), 'import', 'wf-2');
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain('[SAPI_INVALID_INPUT] invalid import input: | bucketId must look like in.c-name');
  });

  it('uses the code of plain errors and appends the messages of their causes', () => {
    expect(describeFailure(new CliError('SAPI_CLI_TEMPORAL_UNREACHABLE', 'cannot reach Temporal at localhost:1'), 'export')).toBe(
      'export failed [SAPI_CLI_TEMPORAL_UNREACHABLE] cannot reach Temporal at localhost:1',
    );
    const grpc = new Error('Failed to start Workflow', { cause: new Error('14 UNAVAILABLE: No connection established') });
    expect(describeFailure(grpc, 'import')).toBe('import failed [Error] Failed to start Workflow: 14 UNAVAILABLE: No connection established');
    expect(describeFailure('boom', 'worker')).toBe('worker failed [Error] boom');
  });

  it('gives a missing namespace one code and one message, whether the client or the server says it (status vs import)', () => {
    const fromServer = Object.assign(new Error('5 NOT_FOUND: Namespace nope is not found.'), { code: 5 });
    const expected =
      'failed [SAPI_TEMPORAL_NAMESPACE_NOT_FOUND] TEMPORAL_NAMESPACE "nope" does not exist (create it, or set TEMPORAL_NAMESPACE / --namespace to an existing one)';
    expect(describeFailure(fromServer, 'import')).toBe(`import ${expected}`);
    expect(describeFailure(new NamespaceNotFoundError('nope'), 'status', 'wf-1')).toBe(`status ${expected} (workflow wf-1)`);
  });
});
