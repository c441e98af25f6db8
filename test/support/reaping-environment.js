// The jest environment of every test file: Node's, plus a reaper for the service processes a file started.
// A test that fails between starting an instance and stopping it would leave the child running, and its
// pipes keep jest from ever exiting (CI then dies at its time limit, not at the failure). After the file's
// last hook, every child still alive is killed and named on stderr, so the leak shows and costs nothing.
const { TestEnvironment } = require('jest-environment-node');

class ReapingEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    this.global.__serviceChildren = new Set();
  }

  async teardown() {
    const alive = [...this.global.__serviceChildren].filter((c) => c.exitCode === null && c.signalCode === null);
    for (const child of alive) {
      process.stderr.write(`reaping-environment: ${this.testPath} left service pid ${child.pid} running; killed\n`);
      child.kill('SIGKILL');
    }
    await super.teardown();
  }
}

module.exports = ReapingEnvironment;
