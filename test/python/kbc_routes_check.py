"""
Faithfulness check of the routes added for issue 16: drives the emulator with the official Python client (kbcstorage)
where it has a method (table metadata, data preview, branch detail and metadata) and prints one JSON document with what it saw.
Run by test/integration/emulator/python-client.test.ts.

Usage: python kbc_routes_check.py <storage_url> <token> <work_dir>
"""
import json
import os
import sys

from kbcstorage.client import Client
from kbcstorage.tables_metadata import TablesMetadata


def main():
    url, token, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    client = Client(url, token)
    out = {}

    bucket = client.buckets.create("pyroutes", stage="in")
    path = os.path.join(work, "people.csv")
    with open(path, "w", newline="") as f:
        f.write('id,name\n1,Ann\n2,"Bob, Jr."\n3,Cid\n')
    table_id = client.tables.create(bucket["id"], "people", path, primary_key=["id"])

    metadata = TablesMetadata(url, token)
    out["created"] = metadata.create(
        table_id,
        "user",
        [{"key": "KBC.description", "value": "People"}],
        [{"columnName": "name", "key": "KBC.description", "value": "first name"}],
    )
    listed = metadata.list(table_id)
    out["listed"] = [{k: m[k] for k in ("key", "value", "provider")} for m in listed]
    metadata.delete(table_id, listed[0]["id"])
    out["afterDelete"] = metadata.list(table_id)
    detail = client.tables.detail(table_id)
    out["columnMetadata"] = {c: [m["value"] for m in ms] for c, ms in detail["columnMetadata"].items()}

    out["preview"] = client.tables.preview(table_id, columns=["name", "id"])
    out["previewFiltered"] = client.tables.preview(table_id, where_column="id", where_values=["1", "3"], columns=["name"])

    out["defaultBranch"] = client.branches.branch_detail()
    out["branchOne"] = client.branches.branch_detail("1")
    out["branchMetadata"] = client.branches.metadata()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
