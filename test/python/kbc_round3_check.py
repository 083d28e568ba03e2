"""
Faithfulness check of issue 39: drives an emulator started with no special settings with the official Python client
(kbcstorage) through its table, file and component calls that round 3 made faithful, and prints one JSON document with
what it saw. Snapshots are created with plain requests (the client has no call for it); the table is then created
from the snapshot with the client's own create_raw + block_until_completed. Run by
test/integration/emulator/python-client.test.ts.

Usage: python kbc_round3_check.py <storage_url> <token> <work_dir>
"""
import json
import os
import sys

import requests
from kbcstorage.client import Client
from kbcstorage.configurations_metadata import ConfigurationsMetadata


def main():
    url, token, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    client = Client(url, token)
    headers = {"X-StorageApi-Token": token}
    out = {}

    bucket = client.buckets.create("round3", stage="in")
    path = os.path.join(work, "orders.csv")
    with open(path, "w", newline="") as f:
        f.write("id,amount\n1,10\n2,20\n")
    table_id = client.tables.create(bucket["id"], "orders", path, primary_key=["id"])
    detail = client.tables.detail(table_id)
    out["definition"] = detail["definition"]
    out["verifyFeatures"] = client.tokens.verify()["owner"]["features"]

    # a snapshot (plain request: the client has none), then a table from it with the client's own calls
    started = requests.post(f"{url}/v2/storage/tables/{table_id}/snapshots", headers=headers, json={"description": "py"})
    started.raise_for_status()
    snapshot_job = client.jobs.block_until_completed(started.json()["id"])
    out["snapshotJob"] = {k: snapshot_job[k] for k in ("status", "operationName")}
    created = client.tables.create_raw(bucket["id"], "orders_restored", snapshot_id=snapshot_job["results"]["id"])
    restored_job = client.jobs.block_until_completed(created["id"])
    out["restored"] = {k: restored_job["results"][k] for k in ("id", "columns", "primaryKey", "rowsCount")}
    out["restoredPreview"] = client.tables.preview(restored_job["results"]["id"])

    # the client's table delete (synchronous) and a file's own calls
    client.tables.delete(restored_job["results"]["id"])
    out["tablesAfterDelete"] = sorted(t["id"] for t in client.buckets.list_tables(bucket["id"]))
    file_path = os.path.join(work, "notes.txt")
    with open(file_path, "w") as f:
        f.write("hello\n")
    file_id = client.files.upload_file(file_path, tags=["round3"])
    out["fileTags"] = client.files.detail(file_id)["tags"]
    out["filesByTag"] = [f["id"] == file_id for f in client.files.list(tags=["round3"])]

    # components: the service's uri, type and name; rows without a state; an unknown component is an error
    config = client.configurations.create("ex-generic-v2", "API", configuration={"parameters": {"api": {"baseUrl": "https://example.com/"}}})
    listed = {c["id"]: c for c in client.components.list()}
    out["genericComponent"] = {k: listed["ex-generic-v2"][k] for k in ("id", "type", "name", "uri")}
    row = requests.post(f"{url}/v2/storage/branch/default/components/ex-generic-v2/configs/{config['id']}/rows", headers=headers, json={"name": "r1"})
    row.raise_for_status()
    out["rowState"] = client.configurations.detail("ex-generic-v2", config["id"])["rows"][0]["state"]
    try:
        client.configurations.list("no.such-component")
        out["unknownComponent"] = "listed"
    except requests.HTTPError as error:
        out["unknownComponent"] = {"status": error.response.status_code, "code": error.response.json().get("code")}

    # configuration metadata with the client's own class
    metadata = ConfigurationsMetadata(url, token, "default")
    out["metadataCreated"] = [(m["key"], m["value"]) for m in metadata.create("ex-generic-v2", config["id"], "user", [{"key": "KBC.configuration.folderName", "value": "APIs"}])]
    listed_metadata = metadata.list("ex-generic-v2", config["id"])
    out["metadataListed"] = [(m["key"], m["value"]) for m in listed_metadata]
    metadata.delete("ex-generic-v2", config["id"], listed_metadata[0]["id"])
    out["metadataAfterDelete"] = metadata.list("ex-generic-v2", config["id"])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
