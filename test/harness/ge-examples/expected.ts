/**
 * Where the project stands against the reference extractor's documentation examples (`../shared/ge-examples`).
 * `test/unit/extractor/ge-examples.test.ts` fails when a listed example stops passing, when an unlisted one starts
 * passing (list it), and when the README's count is not the real one.
 */

/** Examples that produce the reference's tables through the mock API. */
export const PASSING: readonly string[] = [
  '001-simple-job',
  '002-array-in-object',
  '003-multiple-arrays-in-object',
  '004-array-in-nested-object',
  '005-two-arrays-in-nested-object',
  '006-simple-object',
  '007-nested-object',
  '008-single-object-in-array',
  '009-nested-array',
  '011-object-with-nested-object',
  '015-skip-boolean',
  '021-basic-child-job',
  '022-basic-child-job-datatype',
  '026-basic-deeper-nesting',
  '027-basic-deeper-nesting-alternative',
  '028-advanced-deep-nesting',
  '033-job-parameters',
  '035-complex-post',
  '036-complex-get',
  '037-retry-header',
  '038-default-headers',
  '039-default-parameters',
  '057-pagination-response-param-basic',
  '058-pagination-response-param-override',
  '059-pagination-response-param-scroll-request',
  '075-incremental-output',
  '120-datafield-separator',
  '130-unsupported-nested-array',
];

/**
 * Examples the mock run cannot judge: their API is HTTPS (the mock is plain HTTP), or the outcome is a refusal.
 * They are not counted as passing here.
 */
export const JUDGED_ELSEWHERE: Readonly<Record<string, string>> = {
  '131-ssh-tunnel': 'an SSH tunnel must be refused at validation',
  '133-ssh-tunnel-iterations-params': 'an SSH tunnel must be refused at validation',
  '141-https-self-signed': 'HTTPS with the API\'s own CA',
  '142-https-client-cert': 'HTTPS with a client certificate',
};
