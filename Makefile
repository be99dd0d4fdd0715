# A thin facade over the npm scripts (same verb everywhere).
.PHONY: gen build test test-unit test-int test-e2e fuzz lint up down start bench k8s

gen:
	npm run gen
build:
	npm run build
test:
	npm test
test-unit:
	npm run test:unit
test-int:
	npm run test:int
test-e2e:
	npm run test:e2e
fuzz:
	npm run fuzz
lint:
	npm run lint
start:
	npm start
bench:
	npm run bench
up:
	docker compose up -d --build
down:
	docker compose down
k8s:
	# Renders both overlays with kubectl kustomize (prod with secrets.env.example) and checks them.
	node scripts/test.mjs --projects integration --path apps/ctxmesh/test/kustomize
