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
	kubectl kustomize deploy/k8s/overlays/dev >/dev/null && kubectl kustomize deploy/k8s/overlays/prod >/dev/null
