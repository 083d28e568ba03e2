// The workflows of the bench's empty SDK worker (`bench/empty-worker-child.ts`): one that returns at once, so the
// worker has a workflow context as any worker that ran a workflow has.
export async function emptyWorkflow(): Promise<string> {
  return 'done';
}
