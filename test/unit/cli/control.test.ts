import { lostWithItsTask } from '../../../src/cli/control';

describe('control commands', () => {
  it('send an update again only when the server dropped it with its workflow task', () => {
    const grpc = new Error('9 FAILED_PRECONDITION: Unable to perform workflow execution update due to unexpected workflow task failure.');
    expect(lostWithItsTask(new Error('Workflow Update failed', { cause: grpc }))).toBe(true);
    expect(lostWithItsTask(new Error('14 UNAVAILABLE: connection refused'))).toBe(false);
    expect(lostWithItsTask('unexpected workflow task failure')).toBe(false);
  });
});
