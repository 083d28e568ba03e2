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
  '041-paging-stop-same',
  '042-paging-stop-same-2',
  '043-paging-stop-underflow',
  '044-paging-stop-underflow-struct',
  '045-next-page-flag-has-more',
  '046-next-page-flag-has-more-2',
  '047-next-page-flag-is-last',
  '048-force-stop',
  '049-pagination-offset-rename',
  '050-pagination-offset-override',
  '051-pagination-pagenum-basic',
  '052-pagination-pagenum-rename',
  '053-pagination-pagenum-override',
  '054-pagination-response-url-basic',
  '055-pagination-response-url-params',
  '056-pagination-response-url-params-override',
  '057-pagination-response-param-basic',
  '058-pagination-response-param-override',
  '059-pagination-response-param-scroll-request',
  '060-pagination-cursor-basic',
  '061-pagination-cursor-reverse',
  '062-pagination-multiple-scrollers',
  '075-incremental-output',
  '116-multiple-conditions-multiple-jobs',
  '120-datafield-separator',
  '126-pagination-stop-limit',
  '127-pagination-stop-field',
  '130-unsupported-nested-array',
  '138-pagination-stop-field-child-filter',
  '139-pagination-hasmore-child-filter',
  '140-pagination-forcestop-child-filter',
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
