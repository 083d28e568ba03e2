// A deliberately different importTableWorkflow (a timer where the real one schedules an activity), for proving
// that the saved-history replay check fails on non-deterministic changes.
import { sleep } from '@temporalio/workflow';

export async function importTableWorkflow(): Promise<void> {
  await sleep(1);
}
