import { branchNameTaken, branchResource, deleteBranch, duplicateBranchName, saveBranch } from '../branches';
import { type EmulatorContext } from '../context';
import { JobError } from '../errors';
import { type BranchRecord, type JobRecord } from '../model';
import { formatTimestamp } from '../time';

/** `devBranchCreate`: the branch is created when the job runs; its detail is the job's `results`. */
export async function runBranchCreate(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const name = String(job.operationParams.name);
  if (branchNameTaken(ctx, name)) {
    const { code, message } = duplicateBranchName(name);
    throw new JobError(code, message);
  }
  const branch: BranchRecord = {
    id: ctx.nextId('branch'),
    name,
    description: String(job.operationParams.description ?? ''),
    created: formatTimestamp(),
    creatorToken: job.creatorToken,
  };
  saveBranch(ctx, branch);
  return branchResource(ctx, branch);
}

/** `devBranchDelete`: forgets the branch (the emulator's branches share the default branch's storage). */
export async function runBranchDelete(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  deleteBranch(ctx, Number(job.operationParams.branchId));
  ctx.metadata.deleteObject('branch', String(job.operationParams.branchId));
  return [];
}
