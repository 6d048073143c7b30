'use strict';

// A local Serverless Framework plugin: after serverless-python-requirements has put the
// dependencies into the zip, compile every module in it for the Lambda runtime's Python
// (infra/bytecode.py, run with PYTHON_BIN, which must be python3.11). Listed after that plugin
// in serverless.yml, so its hook runs after the requirements are in. Without this, every cold
// start compiles every module from source: Lambda's code directory is read-only.

const { spawnSync } = require('child_process');
const path = require('path');

class Bytecode {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      'after:package:createDeploymentArtifacts': () => this.compile(),
    };
  }

  compile() {
    const service = this.serverless.service;
    const servicePath = this.serverless.config.servicePath;
    const artifact =
      (service.package && service.package.artifact) ||
      path.join(servicePath, '.serverless', `${service.service}.zip`);
    const python = process.env.PYTHON_BIN || 'python3.11';
    const script = path.join(servicePath, 'infra', 'bytecode.py');
    const done = spawnSync(python, [script, artifact], { encoding: 'utf8' });
    if (done.error) throw new Error(`bytecode: could not run ${python}: ${done.error.message}`);
    if (done.status !== 0) throw new Error(`bytecode: ${(done.stderr || done.stdout).trim()}`);
    this.serverless.cli.log(done.stdout.trim());
  }
}

module.exports = Bytecode;
