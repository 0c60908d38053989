// Validates what infra/ ships, without Docker or a cluster:
// - infra/compose.yaml against the Compose specification's schema and dclint's rules (the
//   `dclint` npm package carries both), then its shape: the migration job runs first, api ×2;
// - every manifest in infra/k8s against the Kubernetes schemas compiled into `kubernetes-models`
//   (types, required fields, enums; like kubeconform, unknown fields are not refused), then how
//   they fit together: selectors, probes, port names, config names, the WebSocket path;
// - the Dockerfiles' shape: multi-stage, `pnpm deploy`, non-root user, HEALTHCHECK.
// Environment names are checked against the variable tables of apps/api/src/config.ts and
// apps/worker/src/config.ts (their built dist: run `pnpm build` first), each with a row in
// docs/operations.md. Exits 1 naming every problem.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse, parseAllDocuments } from 'yaml'

const root = fileURLToPath(new URL('../..', import.meta.url))
const infra = join(root, 'infra')
const require = createRequire(import.meta.url)
const problems = []
let checks = 0
const expect = (ok, message) => {
  checks++
  if (!ok) problems.push(message)
}
const read = (path) => readFileSync(join(root, path), 'utf8')

// The variables the apps read: the keys of their tables (the shared ones included).
const { API_VARIABLES } = await import('../../apps/api/dist/config.js')
const { WORKER_VARIABLES } = await import('../../apps/worker/dist/config.js')
const known = new Set([...Object.keys(API_VARIABLES), ...Object.keys(WORKER_VARIABLES)])
// docs/operations.md has a row for each.
const operations = read('docs/operations.md')
for (const name of known) expect(operations.includes(`| \`${name}\` |`), `docs/operations.md: no row for ${name}`)
const expectKnown = (names, where) => {
  for (const name of names) expect(known.has(name), `${where}: ${name} is read by neither the API nor the worker`)
}

// --- Dockerfiles -------------------------------------------------------------------------
for (const app of ['api', 'worker']) {
  const file = `infra/docker/${app}.Dockerfile`
  if (!existsSync(join(root, file))) {
    expect(false, `${file} is missing`)
    continue
  }
  const text = read(file)
  const stages = text.split(/^FROM /m).slice(1)
  const last = stages.at(-1) ?? ''
  expect(stages.length >= 2, `${file}: not multi-stage`)
  expect(stages.every((stage) => /^node:(\$\{NODE_VERSION\}|2[02-9][.\d]*)-slim\b/.test(stage)), `${file}: every stage should be node:<20|22|24>-slim`)
  expect(text.includes(`pnpm --filter @commerce/${app} --prod deploy`), `${file}: no \`pnpm --filter @commerce/${app} --prod deploy\``)
  const user = /^USER\s+(\S+)/m.exec(last)?.[1]
  expect(user !== undefined && !['root', '0', '0:0'].includes(user), `${file}: the final stage runs as root`)
  expect(/^HEALTHCHECK\s/m.test(last), `${file}: the final stage has no HEALTHCHECK`)
  expect(/^CMD \["node", "dist\/main\.js"\]/m.test(last), `${file}: the final stage does not run node dist/main.js`)
}

// --- Compose -----------------------------------------------------------------------------
const dclint = spawnSync(join(root, 'node_modules/.bin/dclint'), ['--max-warnings', '0', '--color', 'false', 'infra/compose.yaml'], {
  cwd: root,
  encoding: 'utf8',
})
expect(dclint.status === 0, `infra/compose.yaml: dclint (schema and rules) failed:\n${dclint.stdout}${dclint.stderr}`)
const compose = parse(read('infra/compose.yaml'), { merge: true })
const services = compose?.services ?? {}
for (const name of ['postgres', 'redis', 'migrate', 'api', 'worker']) expect(services[name], `infra/compose.yaml: no ${name} service`)
expect((services.api?.deploy?.replicas ?? 1) >= 2, 'infra/compose.yaml: api should run 2 replicas')
expect(services.migrate?.command?.join(' ') === 'node scripts/migrate.js', 'infra/compose.yaml: migrate should run node scripts/migrate.js')
for (const name of ['api', 'worker']) {
  const after = services[name]?.depends_on?.migrate?.condition
  expect(after === 'service_completed_successfully', `infra/compose.yaml: ${name} should depend on migrate with service_completed_successfully`)
  expectKnown(Object.keys(services[name]?.environment ?? {}), `infra/compose.yaml ${name}`)
}
for (const [name, service] of Object.entries(services)) {
  const dockerfile = service.build?.dockerfile
  if (dockerfile) expect(existsSync(join(infra, service.build.context ?? '.', dockerfile)), `infra/compose.yaml ${name}: ${dockerfile} not found`)
}
expect(existsSync(join(root, 'apps/api/scripts/migrate.js')), 'apps/api/scripts/migrate.js (the migration job) is missing')

// --- Kubernetes --------------------------------------------------------------------------
const k8s = join(infra, 'k8s')
const kustomization = parse(readFileSync(join(k8s, 'kustomization.yaml'), 'utf8'))
const files = readdirSync(k8s).filter((file) => /\.ya?ml$/.test(file) && file !== 'kustomization.yaml')
expect(
  JSON.stringify([...kustomization.resources].sort()) === JSON.stringify([...files].sort()),
  `infra/k8s/kustomization.yaml resources (${kustomization.resources}) differ from the files (${files})`,
)
const objects = []
for (const file of files) {
  for (const document of parseAllDocuments(readFileSync(join(k8s, file), 'utf8'))) {
    for (const error of document.errors) expect(false, `infra/k8s/${file}: ${error.message}`)
    const object = document.toJS()
    if (object) objects.push({ file, object })
  }
}
for (const { file, object } of objects) {
  const where = `infra/k8s/${file} ${object.kind}/${object.metadata?.name}`
  let Model
  try {
    Model = require(`kubernetes-models/${object.apiVersion}/${object.kind}`)[object.kind]
  } catch {
    expect(false, `${where}: unknown apiVersion/kind ${object.apiVersion} ${object.kind}`)
    continue
  }
  try {
    new Model(object).validate()
    expect(true)
  } catch (error) {
    expect(false, `${where}: ${error.message}`)
  }
}
const find = (kind, name) => objects.find(({ object }) => object.kind === kind && object.metadata?.name === name)?.object
const all = (kind) => objects.filter(({ object }) => object.kind === kind).map(({ object }) => object)
const matches = (selector, labels) => Object.entries(selector ?? {}).every(([key, value]) => labels?.[key] === value)
const images = new Set(kustomization.images.map((image) => image.name))

const config = find('ConfigMap', 'commerce-config')
const secret = find('Secret', 'commerce-secrets')
expect(config, 'infra/k8s: no ConfigMap commerce-config')
expect(secret, 'infra/k8s: no Secret commerce-secrets')
expectKnown(Object.keys(config?.data ?? {}), 'ConfigMap commerce-config')
expectKnown(Object.keys(secret?.stringData ?? {}), 'Secret commerce-secrets')
for (const name of ['DATABASE_URL', 'JWT_SECRET', 'REDIS_URL']) expect(secret?.stringData?.[name], `Secret commerce-secrets: no ${name}`)
for (const name of ['DATABASE_URL', 'JWT_SECRET', 'REDIS_URL']) expect(!config?.data?.[name], `ConfigMap commerce-config: ${name} belongs in the Secret`)

const podSpecs = [...all('Deployment'), ...all('Job')].map((owner) => ({ owner, spec: owner.spec.template.spec }))
for (const { owner, spec } of podSpecs) {
  const where = `${owner.kind}/${owner.metadata.name}`
  expect(spec.securityContext?.runAsNonRoot === true, `${where}: runAsNonRoot is not set`)
  for (const container of spec.containers) {
    expect(images.has(container.image), `${where}: image ${container.image} is not in kustomization.yaml images`)
    for (const from of container.envFrom ?? []) {
      if (from.configMapRef) expect(find('ConfigMap', from.configMapRef.name), `${where}: ConfigMap ${from.configMapRef.name} not found`)
      if (from.secretRef) expect(find('Secret', from.secretRef.name), `${where}: Secret ${from.secretRef.name} not found`)
    }
    for (const env of container.env ?? []) {
      const ref = env.valueFrom?.secretKeyRef
      if (ref) expect(find('Secret', ref.name)?.stringData?.[ref.key], `${where}: secret key ${ref.name}/${ref.key} not found`)
    }
    if (owner.kind !== 'Deployment') continue
    expect(matches(owner.spec.selector.matchLabels, owner.spec.template.metadata.labels), `${where}: selector does not match the pod labels`)
    const portNames = new Set((container.ports ?? []).map((port) => port.name))
    for (const probe of ['readinessProbe', 'livenessProbe']) {
      const port = container[probe]?.httpGet?.port
      expect(container[probe], `${where}: no ${probe}`)
      expect(port === undefined || portNames.has(port), `${where}: ${probe} port ${port} is not a container port name`)
    }
  }
}
expect(find('Deployment', 'commerce-api'), 'infra/k8s: no Deployment commerce-api')
expect(find('Deployment', 'commerce-worker'), 'infra/k8s: no Deployment commerce-worker')
const job = find('Job', 'commerce-migrate')
expect(job?.spec.template.spec.containers[0].command?.join(' ') === 'node scripts/migrate.js', 'infra/k8s: the Job commerce-migrate should run node scripts/migrate.js')
const apiPaths = find('Deployment', 'commerce-api')?.spec.template.spec.containers[0].readinessProbe?.httpGet?.path
expect(apiPaths === '/ready', 'Deployment/commerce-api: the readiness probe should ask /ready')

for (const service of all('Service')) {
  const target = all('Deployment').find((deployment) => matches(service.spec.selector, deployment.spec.template.metadata.labels))
  expect(target, `Service/${service.metadata.name}: its selector matches no Deployment`)
  const portNames = new Set(target?.spec.template.spec.containers.flatMap((container) => (container.ports ?? []).map((port) => port.name)))
  for (const port of service.spec.ports) expect(portNames.has(port.targetPort), `Service/${service.metadata.name}: targetPort ${port.targetPort} is not a container port name`)
}
for (const hpa of all('HorizontalPodAutoscaler')) {
  expect(find(hpa.spec.scaleTargetRef.kind, hpa.spec.scaleTargetRef.name), `HorizontalPodAutoscaler/${hpa.metadata.name}: its target is not defined`)
}
for (const budget of all('PodDisruptionBudget')) {
  const covered = all('Deployment').some((deployment) => matches(budget.spec.selector.matchLabels, deployment.spec.template.metadata.labels))
  expect(covered, `PodDisruptionBudget/${budget.metadata.name}: its selector matches no Deployment`)
}
const ingresses = all('Ingress')
const paths = ingresses.flatMap((ingress) => ingress.spec.rules.flatMap((rule) => rule.http.paths))
expect(paths.some((path) => path.path === '/api/v1/ws'), 'Ingress: no path for the WebSocket /api/v1/ws')
for (const path of paths) {
  const service = find('Service', path.backend.service.name)
  expect(service, `Ingress path ${path.path}: Service ${path.backend.service.name} not found`)
  const port = path.backend.service.port
  expect(service?.spec.ports.some((p) => p.name === port.name || p.port === port.number), `Ingress path ${path.path}: the Service has no port ${port.name ?? port.number}`)
}
for (const ingress of ingresses) {
  const timeout = Number(ingress.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-read-timeout'])
  expect(timeout >= 60, `Ingress/${ingress.metadata.name}: proxy-read-timeout should outlast the WebSocket heartbeat (30 s)`)
}

if (problems.length > 0) {
  console.error(`infra: ${problems.length} of ${checks} checks failed:\n  - ${problems.join('\n  - ')}`)
  process.exit(1)
}
console.log(`infra: ${checks} checks passed (compose.yaml, ${objects.length} Kubernetes objects, 2 Dockerfiles)`)
