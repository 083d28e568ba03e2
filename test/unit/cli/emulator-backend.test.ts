import { emulatorAbs } from '../../../src/cli/emulator';

describe('sapi-temporal emulator --backend azure', () => {
  it('reads the Azure account from AZURE_STORAGE_CONNECTION_STRING and the container from SAPI_EMULATOR_BUCKET', () => {
    const env = {
      AZURE_STORAGE_CONNECTION_STRING: 'DefaultEndpointsProtocol=http;AccountName=dev;AccountKey=a2V5==;BlobEndpoint=http://127.0.0.1:10000/dev;',
      SAPI_EMULATOR_BUCKET: 'files',
    };
    expect(emulatorAbs(env)).toEqual({ blobEndpoint: 'http://127.0.0.1:10000/dev', accountName: 'dev', accountKey: 'a2V5==', container: 'files' });
    expect(emulatorAbs({ AZURE_STORAGE_CONNECTION_STRING: env.AZURE_STORAGE_CONNECTION_STRING }).container).toBe('sapi-files');
  });

  it('names what is missing from the connection string, or that it is not set', () => {
    expect(() => emulatorAbs({})).toThrow(/AZURE_STORAGE_CONNECTION_STRING is not set: --backend azure/);
    expect(() => emulatorAbs({ AZURE_STORAGE_CONNECTION_STRING: 'AccountName=dev' })).toThrow(/lacks AccountKey, BlobEndpoint/);
  });
});
