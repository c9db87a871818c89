#!/usr/bin/env python3
"""Merges the gathered recordings (collect-*.json) into answers.json.

Each collect file is a JSON array of recorded live vPIC answers with their
source (README.md). Every answer becomes one entry of answers.json with its
flat fields (vPIC's DecodeVinValues keys):
  - "fields": a complete flat answer, kept as recorded;
  - "nonempty_fields": a flat answer with its empty values left out: a
    missing key is "";
  - "nested": a DecodeVin variable list, keyed by VariableId;
  - "variables": a DecodeVin answer kept as Variable -> Value with the
    values "", "Not Applicable", "0", "None" and "N/A" left out by the
    recording script, so a missing "Error Code" on an answer whose Error
    Text starts "0 - " is "0".
One entry per VIN: the first complete answer wins, then the others in the
order above. Run from this folder: python3 merge.py
"""
import glob, json

NESTED = {142: "SuggestedVIN", 143: "ErrorCode", 144: "PossibleValues", 156: "AdditionalErrorText", 191: "ErrorText",
          26: "Make", 27: "Manufacturer", 28: "Model", 29: "ModelYear", 31: "PlantCity", 34: "Series", 38: "Trim",
          39: "VehicleType", 75: "PlantCountry", 77: "PlantState", 5: "BodyClass", 15: "DriveType", 9: "EngineCylinders",
          11: "DisplacementCC", 12: "DisplacementCI", 13: "DisplacementL", 24: "FuelTypePrimary", 37: "TransmissionStyle",
          63: "TransmissionSpeeds", 157: "ManufacturerId"}
NAMES = {"Suggested VIN": "SuggestedVIN", "Error Code": "ErrorCode", "Possible Values": "PossibleValues",
         "Additional Error Text": "AdditionalErrorText", "Error Text": "ErrorText", "Make": "Make",
         "Manufacturer Name": "Manufacturer", "Model": "Model", "Model Year": "ModelYear", "Plant City": "PlantCity",
         "Series": "Series", "Trim": "Trim", "Vehicle Type": "VehicleType", "Plant Country": "PlantCountry",
         "Plant State": "PlantState", "Body Class": "BodyClass", "Drive Type": "DriveType",
         "Engine Number of Cylinders": "EngineCylinders", "Displacement (CC)": "DisplacementCC",
         "Displacement (CI)": "DisplacementCI", "Displacement (L)": "DisplacementL",
         "Fuel Type - Primary": "FuelTypePrimary", "Transmission Style": "TransmissionStyle",
         "Transmission Speeds": "TransmissionSpeeds", "Manufacturer Id": "ManufacturerId"}
RANK = {"fields": 0, "nonempty_fields": 1, "nested": 2, "variables": 3}


def flat(e):
    if "fields" in e:
        return "fields", e["fields"]
    if "nonempty_fields" in e:
        return "nonempty_fields", e["nonempty_fields"]
    if "nested" in e:
        out = {}
        for v in e["nested"]:
            key = NESTED.get(v.get("VariableId"))
            if key and v.get("Value") is not None:
                out[key] = v["ValueId"] if key == "ErrorCode" and v.get("ValueId") else v["Value"]
        return "nested", out
    if "variables" in e:
        out = {NAMES[k]: v for k, v in e["variables"].items() if k in NAMES}
        if "ErrorCode" not in out and out.get("ErrorText", "").startswith("0 - "):
            out["ErrorCode"] = "0"
        return "variables", out
    return None, None


best = {}
for path in sorted(glob.glob("collect-*.json")):
    for e in json.load(open(path)):
        kind, fields = flat(e)
        if kind is None or not fields.get("ErrorCode"):
            continue
        vin = e["vin"].strip().upper()
        entry = {"vin": vin, "endpoint": e.get("endpoint"), "source": e["source"], "recorded": e.get("recorded"),
                 "form": kind, "fields": fields}
        if e.get("note"):
            entry["note"] = e["note"]
        if vin not in best or RANK[kind] < RANK[best[vin]["form"]]:
            best[vin] = entry
out = sorted(best.values(), key=lambda x: x["vin"])
with open("answers.json", "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(len(out), "answers;", {k: sum(1 for x in out if x["form"] == k) for k in RANK})
