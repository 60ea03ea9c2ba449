#!/usr/bin/env bash
# Smoke test of dlq-redrive on a REAL AWS account (docs/smoke-test.md). Never run by CI.
#
# Deploys the pipeline and the example stack (a throwaway `orders` queue and its DLQ, registered
# with MonitoredDlq), dead-letters a few messages, waits for the alarm -> triage -> incident,
# stops the approval-waiting run triage started, redrives pre-approved through `dlq redrive`,
# checks the report and that the redriven bodies are the ones sent, and tears everything down.
#
# Needs: Node.js 20+, npm ci done, the AWS CLI v2, jq, credentials for a TEST account (bootstrapped
# for CDK), and SMOKE_ACCOUNT_ID set to that account's id (a guard against the wrong profile).
# Usage: SMOKE_ACCOUNT_ID=123456789012 AWS_REGION=eu-west-1 scripts/smoke-aws.sh [--keep]
#   --keep   leave the stacks deployed (for a look in the console); tear down later with
#            `npx cdk destroy --all --force` and the retained resources listed at the end.
set -euo pipefail

MESSAGES=${SMOKE_MESSAGES:-5}
KEEP=${1:-}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dlq-smoke.XXXXXX")
say() { printf '[%s] %s\n' "$(date -u +%H:%M:%SZ)" "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

for tool in aws jq npx; do command -v "$tool" >/dev/null || fail "$tool is not installed"; done
: "${AWS_REGION:?set AWS_REGION}"
: "${SMOKE_ACCOUNT_ID:?set SMOKE_ACCOUNT_ID to the test account id}"
caller=$(aws sts get-caller-identity --query Account --output text)
[[ "$caller" == "$SMOKE_ACCOUNT_ID" ]] || fail "credentials are for account $caller, not SMOKE_ACCOUNT_ID=$SMOKE_ACCOUNT_ID"
export CDK_DEFAULT_ACCOUNT=$caller CDK_DEFAULT_REGION=$AWS_REGION

teardown() {
  if [[ "$KEEP" == "--keep" ]]; then say "--keep: stacks left deployed"; return; fi
  say "tearing down (cdk destroy --all)"
  npx cdk destroy --all --force -c example=true >&2 || say "cdk destroy failed: remove the stacks DlqRedriveExample and DlqRedrivePipeline by hand"
  say "retained on purpose (delete by hand when done): the DynamoDB table (deletion protection on:"
  say "  aws dynamodb update-table --table-name \$TABLE --no-deletion-protection-enabled, then delete-table)"
  say "  and the Slack secret (aws secretsmanager delete-secret --secret-id \$SECRET --force-delete-without-recovery)"
}
trap teardown EXIT

say "1/8 deploy (account $caller, Region $AWS_REGION)"
npx cdk deploy --all -c example=true --require-approval never --outputs-file "$WORK/outputs.json" >&2
export TABLE_NAME STATE_MACHINE_ARN
TABLE_NAME=$(jq -r '.DlqRedrivePipeline.TableName' "$WORK/outputs.json")
STATE_MACHINE_ARN=$(jq -r '.DlqRedrivePipeline.StateMachineAliasArn' "$WORK/outputs.json")
# The example stack's two queues (logical ids Orders... and OrdersDlq...); physical ids are URLs.
queues=$(aws cloudformation describe-stack-resources --stack-name DlqRedriveExample \
  --query "StackResources[?ResourceType=='AWS::SQS::Queue'].[LogicalResourceId,PhysicalResourceId]" --output json)
DLQ_URL=$(jq -r '.[] | select(.[0] | startswith("OrdersDlq")) | .[1]' <<< "$queues")
SOURCE_URL=$(jq -r '.[] | select((.[0] | startswith("Orders")) and (.[0] | startswith("OrdersDlq") | not)) | .[1]' <<< "$queues")
[[ "$SOURCE_URL" == https://* && "$DLQ_URL" == https://* ]] || fail "example queues not found in DlqRedriveExample: $queues"
DLQ_ARN=$(aws sqs get-queue-attributes --queue-url "$DLQ_URL" --attribute-names QueueArn --query Attributes.QueueArn --output text)
say "   table $TABLE_NAME, source $SOURCE_URL, DLQ $DLQ_ARN"

say "2/8 register the throwaway queue for a pre-approved start (the construct's registration, plus allowPreApproved)"
npx dlq registrations --json | jq --arg arn "$DLQ_ARN" '.[] | select(.registration.dlqArn == $arn) | .registration' > "$WORK/registration.json"
[[ -s "$WORK/registration.json" ]] || fail "the example DLQ has no valid registration (npx dlq registrations)"
npx dlq register "$DLQ_ARN" --file "$WORK/registration.json" --allow-pre-approved --sample-size 2 \
  --ramp-rates 1,5 --dwell-seconds 30 --json > /dev/null

say "3/8 dead-letter $MESSAGES messages (maxReceiveCount 5: each is received 6 times)"
: > "$WORK/sent.jsonl"
for i in $(seq 1 "$MESSAGES"); do
  body=$(jq -cn --arg id "smoke-$i-$RANDOM" --arg n "$i" '{orderId: $id, n: ($n|tonumber), note: "dlq-redrive smoke test"}')
  aws sqs send-message --queue-url "$SOURCE_URL" --message-body "$body" > /dev/null
  printf '%s\n' "$body" >> "$WORK/sent.jsonl"
done
for _ in $(seq 1 12); do
  aws sqs receive-message --queue-url "$SOURCE_URL" --max-number-of-messages 10 --visibility-timeout 1 --wait-time-seconds 1 > /dev/null || true
  sleep 2
  depth=$(aws sqs get-queue-attributes --queue-url "$DLQ_URL" --attribute-names ApproximateNumberOfMessages --query Attributes.ApproximateNumberOfMessages --output text)
  [[ "$depth" -ge "$MESSAGES" ]] && break
done
[[ "$depth" -ge "$MESSAGES" ]] || fail "only $depth of $MESSAGES messages reached the DLQ"

say "4/8 wait for the DLQ alarm -> triage -> incident (the alarm's period is 1 minute; up to 10 minutes)"
INCIDENT=""
for _ in $(seq 1 60); do
  INCIDENT=$(npx dlq incidents --json | jq -r --arg arn "$DLQ_ARN" '[.[] | select(.dlqArn == $arn)][0].incidentId // empty')
  [[ -n "$INCIDENT" ]] && break
  sleep 10
done
[[ -n "$INCIDENT" ]] || fail "no incident for $DLQ_ARN after 10 minutes (check the alarm and the triage logs)"
say "   incident $INCIDENT"

say "5/8 stop the run triage started (it waits for a Slack approval this smoke test does not give)"
for arn in $(aws stepfunctions list-executions --state-machine-arn "${STATE_MACHINE_ARN%:live}" --status-filter RUNNING --query 'executions[].executionArn' --output text); do
  npx dlq cancel "$arn" --by smoke-test --reason "smoke test: redriven pre-approved instead" --wait-seconds 300 >&2 || true
done

say "6/8 dry run, then the redrive (pre-approved), watched to its end"
npx dlq redrive "$INCIDENT" --dry-run >&2
npx dlq redrive "$INCIDENT" --approved-by smoke-test --by smoke-test --verify-margin-seconds 10 --watch --json > "$WORK/run.json" \
  || fail "the redrive did not succeed: $(jq -r '.run.cause // .run.error // "see above"' "$WORK/run.json" 2>/dev/null)"

say "7/8 check the report and the bodies"
npx dlq show "$INCIDENT" --json > "$WORK/show.json"
jq -e --argjson n "$MESSAGES" '.redrive.outcome == "completed" and .redrive.redriven == $n and (.redrive.missing // 0) == 0 and .redrive.balanced != false' "$WORK/show.json" > /dev/null \
  || fail "report: $(jq -c '.redrive' "$WORK/show.json")"
jq -e '[.audit[].kind] | index("run-started") != null and index("run-ended") != null' "$WORK/show.json" > /dev/null || fail "audit trail incomplete"
npx dlq envelopes "$INCIDENT" --export "$WORK/export.jsonl" > /dev/null
diff <(jq -r 'select(.type != "export-header") | .body' "$WORK/export.jsonl" | sort) <(sort "$WORK/sent.jsonl") \
  || fail "exported bodies differ from the bodies sent"
# No consumer runs in the example stack: the redriven messages wait in the source queue.
back=()
for _ in 1 2 3; do
  out=$(aws sqs receive-message --queue-url "$SOURCE_URL" --max-number-of-messages 10 --wait-time-seconds 5 --query 'Messages[].Body' --output json)
  while IFS= read -r b; do back+=("$b"); done < <(jq -r '.[]?' <<< "$out")
done
diff <(printf '%s\n' "${back[@]}" | sort -u) <(sort "$WORK/sent.jsonl") || fail "the source queue does not hold exactly the bodies sent"

say "8/8 passed: $MESSAGES messages dead-lettered, triaged, redriven byte for byte, report balanced (files in $WORK)"
