"""
Faithfulness check: drives the emulator with the official Python client (kbcstorage) exactly as a user would,
and prints one JSON document with what it saw. Run by test/integration/emulator/python-client.test.ts.

Usage: python kbc_client_check.py <storage_url> <token> <work_dir>
Needs AWS_ENDPOINT_URL_S3 pointing at the emulator's MinIO (boto3 >= 1.28.57 honours it).
"""
import json
import os
import sys

from kbcstorage.client import Client


def write(path, text):
    with open(path, "w", newline="") as f:
        f.write(text)
    return path


def main():
    url, token, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)  # the client downloads slices into the current directory
    client = Client(url, token)
    out = {"token": client.tokens.verify()["description"]}

    bucket = client.buckets.create("pyclient", stage="in")
    out["bucketId"] = bucket["id"]

    first = write(os.path.join(work, "first.csv"), 'id,name,city\n1,Ann,Prague\n2,"Bob, Jr.",Brno\n3,Cid,"Ostrava ""East"""\n')
    table_id = client.tables.create(bucket["id"], "people", first, primary_key=["id"])
    out["tableId"] = table_id

    more = write(os.path.join(work, "more.csv"), "id,name,city\n3,Cid,Olomouc\n4,Dan,Plzen\n")
    out["loadResults"] = client.tables.load(table_id, more, is_incremental=True)

    detail = client.tables.detail(table_id)
    out["table"] = {k: detail[k] for k in ("id", "name", "columns", "primaryKey", "rowsCount")}

    exported = client.tables.export_to_file(table_id, work)
    with open(exported, newline="") as f:
        out["exportedCsv"] = f.read()

    export_file = client.files.list(tags=["table-export"], limit=1)[0]
    out["exportFile"] = {k: export_file[k] for k in ("id", "isSliced", "tags", "name")}

    out["jobs"] = [{"id": j["id"], "operationName": j["operationName"], "status": j["status"]} for j in client.jobs.list()]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
