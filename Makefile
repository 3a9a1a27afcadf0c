# Short verbs; each one calls ./kb, which installs what is missing first.
.PHONY: run worker test lint bench
run:
	./kb run
worker:
	./kb worker
test:
	./kb test
lint:
	./kb lint
bench:
	./kb bench
