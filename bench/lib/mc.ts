/** MinIO's client `mc` as a baseline of the transfer scenarios: where it is, and its figures. */
import { findMc } from '../../src/dev/tools';
import type { BaselineResult } from '../baseline-child';
import { MB } from './stats';

/** The mc binary (`SAPI_MC_BIN` or the tools folder), or why there is none (the mc figures are then left out). */
export function locateMc(): { path: string } | { missing: string } {
  try {
    return { path: findMc().path };
  } catch (err) {
    return { missing: err instanceof Error ? err.message : String(err) };
  }
}

/** CPU seconds (user + system) per GB (10^9 bytes) moved; undefined without bytes. */
export function cpuSecondsPerGb(cpuSeconds: number | undefined, bytes: number): number | undefined {
  if (cpuSeconds === undefined || !(bytes > 0)) return undefined;
  return cpuSeconds / (bytes / (1000 * MB));
}

/** The CPU seconds of mc in a baseline result. */
export function mcCpuSeconds(result: BaselineResult): number {
  return (result.mcCpu?.user ?? 0) + (result.mcCpu?.system ?? 0);
}
