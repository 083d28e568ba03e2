// The Nexus service is served only where the worker's operator turned it on (SAPI_NEXUS_SERVICE or the plugin's
// `nexus` option), with the operations the contract names.
import { loadSettings } from '../../../src/config';
import { SAPI_NEXUS_SERVICE_NAME, sapiNexusService } from '../../../src/nexus';
import { SapiPlugin } from '../../../src/plugin';
import { HandlerError } from 'nexus-rpc';
import { ApplicationFailure } from '@temporalio/common';
import { refuseInternalState } from '../../../src/nexus/handler';

describe('the plugin and its Nexus service', () => {
  const served = async (plugin: SapiPlugin) => ((await plugin.configureWorker({ taskQueue: 'q' })).nexusServices ?? []).map((s) => s.definition.name);

  it('serves nothing by default, the service with SAPI_NEXUS_SERVICE=true or nexus: true, and nothing with nexus: false', async () => {
    expect(await served(new SapiPlugin({ settings: loadSettings({}), startChecks: false }))).toEqual([]);
    expect(await served(new SapiPlugin({ settings: loadSettings({ SAPI_NEXUS_SERVICE: 'true' }), startChecks: false }))).toEqual([SAPI_NEXUS_SERVICE_NAME]);
    expect(await served(new SapiPlugin({ settings: loadSettings({}), nexus: true, startChecks: false }))).toEqual([SAPI_NEXUS_SERVICE_NAME]);
    expect(await served(new SapiPlugin({ settings: loadSettings({ SAPI_NEXUS_SERVICE: 'on' }), nexus: false, startChecks: false }))).toEqual([]);
  });

  it('refuses a value of SAPI_NEXUS_SERVICE that is neither true nor false, by name', () => {
    expect(() => loadSettings({ SAPI_NEXUS_SERVICE: 'maybe' })).toThrow(/SAPI_NEXUS_SERVICE must be true or false/);
  });

  it('names the three operations of the contract', () => {
    expect(Object.keys(sapiNexusService.operations).sort()).toEqual(['exportTable', 'extract', 'importTable']);
  });

  it("refuses a caller's internal run state (resume, sourceGrant) with SAPI_INPUT_FORBIDDEN naming the field, and lets a public input through", () => {
    for (const field of ['resume', 'sourceGrant']) {
      let thrown: unknown;
      try {
        refuseInternalState('extract', { config: {}, [field]: { runKey: 'victim/run' } });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(HandlerError);
      expect((thrown as HandlerError).type).toBe('BAD_REQUEST');
      expect((thrown as HandlerError).retryable).toBe(false);
      const cause = (thrown as HandlerError).cause as ApplicationFailure;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect(cause.type).toBe('SAPI_INPUT_FORBIDDEN');
      expect(cause.message).toMatch(new RegExp(`^${field}: internal run state`));
    }
    expect(() => refuseInternalState('importTable', { source: 'x.csv', bucketId: 'in.c-a', table: 't' })).not.toThrow();
  });
});
