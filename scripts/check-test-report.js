#!/usr/bin/env node
// CI guard: a suite that needs a server must run, not vanish. Reads jest's --json report and
// fails when a required suite is missing, a test was skipped, or nothing ran at all.
const fs = require('node:fs');

const [reportPath, ...required] = process.argv.slice(2);
const report = JSON.parse(fs.readFileSync(reportPath, 'utf8'));
const problems = [];
const ran = report.testResults.map((r) => r.name);
for (const suite of required) {
  const hit = report.testResults.find((r) => r.name.endsWith(suite));
  if (!hit) problems.push(`required suite did not run: ${suite}`);
  else if (hit.assertionResults.filter((a) => a.status === 'passed').length === 0) problems.push(`required suite passed no test: ${suite}`);
}
for (const r of report.testResults) {
  for (const a of r.assertionResults) {
    if (a.status === 'pending' || a.status === 'skipped' || a.status === 'todo') problems.push(`skipped: ${a.fullName}`);
  }
}
if (report.numTotalTests === 0) problems.push('no test ran');
console.log(`jest: ${ran.length} suites`);
console.log(`Tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed`);
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
process.exit(report.success ? 0 : 1);
