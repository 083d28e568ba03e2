/** Development branches: the default branch (id 1, "Main") and the ones created with `POST dev-branches`. */
import { type EmulatorContext } from './context';
import { notFound } from './errors';
import { type BranchRecord } from './model';

export const DEFAULT_BRANCH_ID = 1;
const DEFAULT_BRANCH_CREATED = '2020-01-01T00:00:00+0000';
const BRANCH = 'branch';

export function branchResource(b: BranchRecord | 'default'): Record<string, unknown> {
  if (b === 'default') return { id: DEFAULT_BRANCH_ID, name: 'Main', description: '', created: DEFAULT_BRANCH_CREATED, isDefault: true };
  return { id: b.id, name: b.name, description: b.description, created: b.created, isDefault: false, creatorToken: b.creatorToken };
}

export function listBranches(ctx: EmulatorContext): BranchRecord[] {
  return ctx.state.all<BranchRecord>(BRANCH).sort((a, b) => a.id - b.id);
}

export function saveBranch(ctx: EmulatorContext, branch: BranchRecord): void {
  ctx.state.put(BRANCH, branch.id, branch);
}

export function deleteBranch(ctx: EmulatorContext, id: number): void {
  ctx.state.delete(BRANCH, id);
}

/** The branch of an id from a path (`default` or a number): 404 `storage.devBranches.notFound` when there is none. */
export function findBranch(ctx: EmulatorContext, id: string): BranchRecord | 'default' {
  if (id === 'default' || id === String(DEFAULT_BRANCH_ID)) return 'default';
  const branch = /^\d+$/.test(id) ? ctx.state.get<BranchRecord>(BRANCH, Number(id)) : undefined;
  if (!branch) throw notFound('storage.devBranches.notFound', `development branch ${id} not found (create one with POST /v2/storage/dev-branches)`);
  return branch;
}
