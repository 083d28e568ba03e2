/**
 * The child runs a page starts (`ChildSpec`s, in order), staged outside history: chunks of `CHILD_CHUNK_SIZE` JSON
 * lines under `childrenPrefix(runKey, runNo, pageNo)`. Keys are deterministic per job run and page, so the retry of
 * the call that fetched the page writes the same keys again. See `ChildrenRef` (what the workflow keeps of it).
 */
import type { ChildrenRef, ChildSpec } from '../extractor/checkpoint';
import { SapiInvalidInputError } from '../errors';
import { type ObjectStore } from './object-store';
import { CHILD_CHUNK_SIZE, childChunkKey, childrenPrefix, childrenRootPrefix, readText } from './stage-store';

/** Stages the child list of page `pageNo` of job run `runNo`; returns its reference (next: 0). */
export async function writeChildList(store: ObjectStore, runKey: string, runNo: number, pageNo: number, children: readonly ChildSpec[]): Promise<ChildrenRef> {
  const key = childrenPrefix(runKey, runNo, pageNo);
  const puts: Array<Promise<void>> = [];
  for (let at = 0, chunk = 0; at < children.length; at += CHILD_CHUNK_SIZE, chunk++) {
    let text = '';
    for (const child of children.slice(at, at + CHILD_CHUNK_SIZE)) text += `${JSON.stringify(child)}\n`;
    puts.push(store.put(childChunkKey(key, chunk), text));
  }
  await Promise.all(puts);
  return { key, count: children.length, next: 0 };
}

/** Reads a staged child list by index, one chunk at a time (the chunk in use is kept). */
export class ChildListReader {
  private chunk: { index: number; specs: ChildSpec[] } | undefined;

  /** `key` must be a child list of the extraction `runKey` (never another run's staging). */
  constructor(
    private readonly store: ObjectStore,
    runKey: string,
    private readonly ref: Pick<ChildrenRef, 'key' | 'count'>,
  ) {
    if (!ref.key.startsWith(childrenRootPrefix(runKey)) || ref.key.includes('..')) {
      throw new SapiInvalidInputError(`child list ${ref.key} is not under ${childrenRootPrefix(runKey)} (a run reads only its own staging)`);
    }
  }

  /** The child run at `index` (0-based, below `count`). */
  async at(index: number): Promise<ChildSpec> {
    if (!(Number.isSafeInteger(index) && index >= 0 && index < this.ref.count))
      throw new SapiInvalidInputError(`child ${index} is outside the list of ${this.ref.count} (${this.ref.key})`);
    const chunk = Math.floor(index / CHILD_CHUNK_SIZE);
    if (this.chunk?.index !== chunk) {
      const text = await readText(this.store, childChunkKey(this.ref.key, chunk));
      this.chunk = {
        index: chunk,
        specs: text
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as ChildSpec),
      };
    }
    const spec = this.chunk.specs[index - chunk * CHILD_CHUNK_SIZE];
    if (!spec) throw new Error(`child ${index} is missing from ${childChunkKey(this.ref.key, chunk)}`);
    return spec;
  }
}
