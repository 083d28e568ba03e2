// A workflow module that does not bundle (test/integration/cli/worker-start.test.ts): it imports a module that does not
// exist. JavaScript, so that the type check and the linter leave it alone.
export { lostWorkflow } from './no-such-workflow-module';
