/** Development branches: the default branch (id 1, "Main") and the ones created with `POST dev-branches`. */
import { type EmulatorContext } from './context';
import { notFound } from './errors';
import { type BranchRecord } from './model';

export const DEFAULT_BRANCH_ID = 1;
const DEFAULT_BRANCH_CREATED = '2020-01-01T00:00:00+0000';
const BRANCH = 'branch';

/** Name of the default branch, which cannot be changed. */
export const DEFAULT_BRANCH_NAME = 'Main';
/** The default branch's description (the only thing of it `PUT dev-branches/1` changes). */
const DEFAULT_BRANCH_DESCRIPTION = 'branchDefaultDescription';

/** A branch as the service sends it; its creator is `{id, name}` (the token's description), like the service's. */
export function branchResource(ctx: EmulatorContext, b: BranchRecord | 'default'): Record<string, unknown> {
  if (b === 'default') {
    const description = ctx.state.get<string>(DEFAULT_BRANCH_DESCRIPTION, DEFAULT_BRANCH_ID) ?? '';
    return { id: DEFAULT_BRANCH_ID, name: DEFAULT_BRANCH_NAME, description, created: DEFAULT_BRANCH_CREATED, isDefault: true };
  }
  return {
    id: b.id,
    name: b.name,
    description: b.description,
    created: b.created,
    isDefault: false,
    creatorToken: { id: b.creatorToken.id, name: b.creatorToken.description },
  };
}

export function setDefaultBranchDescription(ctx: EmulatorContext, description: string): void {
  ctx.state.put(DEFAULT_BRANCH_DESCRIPTION, DEFAULT_BRANCH_ID, description);
}

/** Created branches, oldest first. */
export function listBranches(ctx: EmulatorContext): BranchRecord[] {
  return ctx.state.all<BranchRecord>(BRANCH).sort((a, b) => a.id - b.id);
}

/** The service's refusal of a second branch of a name (its PHP client's tests match the text). */
export function duplicateBranchName(name: string): { code: string; message: string } {
  return { code: 'devBranch.duplicateName', message: `There already is a branch with name "${name}"` };
}

/** True when a branch (other than `exceptId`) has this name, the default branch's among them. */
export function branchNameTaken(ctx: EmulatorContext, name: string, exceptId?: number): boolean {
  return name === DEFAULT_BRANCH_NAME || listBranches(ctx).some((b) => b.name === name && b.id !== exceptId);
}

export function saveBranch(ctx: EmulatorContext, branch: BranchRecord): void {
  ctx.state.put(BRANCH, branch.id, branch);
}

export function deleteBranch(ctx: EmulatorContext, id: number): void {
  ctx.state.delete(BRANCH, id);
}

/** The branch of an id from a path (`default` or a number): 404 `storage.devBranches.notFound` with the service's text when there is none. */
export function findBranch(ctx: EmulatorContext, id: string): BranchRecord | 'default' {
  if (id === 'default' || id === String(DEFAULT_BRANCH_ID)) return 'default';
  const branch = /^\d+$/.test(id) ? ctx.state.get<BranchRecord>(BRANCH, Number(id)) : undefined;
  if (!branch) throw notFound('storage.devBranches.notFound', `Branch id:"${id}" was not found.`);
  return branch;
}
