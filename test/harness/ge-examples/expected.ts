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
  '040-required-headers',
  '057-pagination-response-param-basic',
  '058-pagination-response-param-override',
  '059-pagination-response-param-scroll-request',
  '074-http-headers',
  '075-incremental-output',
  '077-query-auth',
  '078-basic-auth',
  '079-login-auth-headers',
  '080-login-auth-query',
  '081-login-auth-headers-query-override',
  '082-login-auth-expires',
  '083-login-auth-expires-date',
  '084-login-auth-expires-seconds',
  '085-function-job-placeholders',
  '086-function-job-placeholders-reference',
  '087-function-baseurl',
  '088-function-baseurl-sprintf',
  '089-function-job-parameters-md5',
  '090-function-job-parameters-sha1',
  '093-function-api-http-headers',
  '094-function-config-headers',
  '095-function-nested',
  '096-function-nested-from-to',
  '097-function-ifempty',
  '098-function-hmac',
  '099-function-query-parameters',
  '100-function-login-headers',
  '101-function-query-auth',
  '103-oauth2-bearer',
  '105-oauth2-login',
  '111-templates-example',
  '117-function-login-params-response',
  '118-function-login-headers-response',
  '119-function-nested-config',
  '120-datafield-separator',
  '128-login-auth-text',
  '129-login-auth-scalar',
  '130-unsupported-nested-array',
  '136-post-request-functions',
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
