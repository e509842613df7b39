"""Every golden set beside the bundled one (data/golden_*, the pool, in SETS) and the held-out ones
(data/heldout/golden_*, named in HELDOUT): each loads, has its exact counts per slice, its labels hold against the
ACLs, and its follow-up chains and injection documents are as written."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ragbench.eval.golden import DEFAULT_FOLDER, GoldenSet, load_golden
from ragbench.schema import Classification
from ragbench.text import normalize_whitespace

C = Classification
SETS: dict[str, dict[str, Any]] = {
    "golden_alderbrook": dict(
        documents=37, questions=108, answerable=79, qrels=89,
        principals=["ab-client", "ab-director", "ab-hr", "ab-locum", "ab-nurse", "ab-partner", "ab-reception",
                    "ab-staff", "ab-vet"],
        tags={"direct": 37, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 15, "refuse-unanswerable": 14,
              "followup": 18},
        classifications={C.PUBLIC: 6, C.INTERNAL: 22, C.CONFIDENTIAL: 6, C.RESTRICTED: 3},
        chains={"c-oncall": 4, "c-drugs": 4, "c-purchase": 4, "c-puppy": 3, "c-breach": 3},
        forum=("pub-forum-post", "[1][4]"), ticket=("it-ticket-4471", "[2]"),
        answerable_injected={"a036": "pub-forum-post"}),
    "golden_tarnwell": dict(
        documents=37, questions=96, answerable=72, qrels=81,
        principals=["tw-agent", "tw-board", "tw-contractor", "tw-controller", "tw-customer", "tw-director", "tw-hr",
                    "tw-staff", "tw-technician"],
        tags={"direct": 34, "paraphrase": 13, "multi-doc": 9, "refuse-acl": 12, "refuse-unanswerable": 12,
              "followup": 16},
        classifications={C.PUBLIC: 7, C.INTERNAL: 21, C.CONFIDENTIAL: 6, C.RESTRICTED: 3},
        chains={"c-standby": 4, "c-purchase": 3, "c-heron": 3, "c-breach": 3, "c-chlorine": 3},
        forum=("pub-forum-post", "[1][3]"), ticket=("it-ticket-5821", "[2] and [6]"),
        answerable_injected={"t031": "pub-forum-post", "t023": "it-ticket-5821"}),
    "golden_redmarsh": dict(
        documents=37, questions=98, answerable=73, qrels=83,
        principals=["rm-adviser", "rm-agency", "rm-board", "rm-controller", "rm-director", "rm-driver", "rm-engineer",
                    "rm-hr", "rm-passenger", "rm-staff"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 7, C.INTERNAL: 21, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-fares": 4, "c-defect": 4, "c-sick": 3, "c-kingfisher": 3, "c-expenses": 3},
        forum=("pub-forum-thread", "[1][3]"), ticket=("cs-feedback-cf25-08814", "[2] and [5]"),
        answerable_injected={"r007": "pub-forum-thread", "r023": "cs-feedback-cf25-08814"}),
    "golden_hollinmoor": dict(
        documents=38, questions=98, answerable=73, qrels=83,
        principals=["hm-agent", "hm-board", "hm-director", "hm-firefighter", "hm-handler", "hm-hr", "hm-ops",
                    "hm-passenger", "hm-security", "hm-staff"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 7, C.INTERNAL: 21, C.CONFIDENTIAL: 6, C.RESTRICTED: 4},
        chains={"c-parking": 4, "c-airside": 4, "c-fire": 3, "c-osprey": 3, "c-expenses": 3},
        forum=("pub-forum-thread", "[1][3]"), ticket=("ps-feedback-25-2291", "[2] and [7]"),
        answerable_injected={"h007": "pub-forum-thread", "h026": "ps-feedback-25-2291"}),
    "golden_marrowgate": dict(
        documents=39, questions=98, answerable=73, qrels=83,
        principals=["mg-attendant", "mg-board", "mg-chef", "mg-director", "mg-events", "mg-guest", "mg-hr",
                    "mg-reception", "mg-staff", "mg-therapist"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 9, C.INTERNAL: 21, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-rates": 4, "c-allergy": 3, "c-family": 4, "c-grayling": 3, "c-expenses": 3},
        forum=("pub-forum-thread", "[1][5]"), ticket=("fo-feedback-gv-25-0873", "[3] and [8]"),
        answerable_injected={"m010": "pub-forum-thread", "m026": "fo-feedback-gv-25-0873"}),
    "golden_kestrel": dict(
        documents=40, questions=98, answerable=73, qrels=83,
        principals=["kh-adviser", "kh-board", "kh-director", "kh-housing", "kh-hr", "kh-income", "kh-operative",
                    "kh-staff", "kh-surveyor", "kh-tenant"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 10, C.INTERNAL: 20, C.CONFIDENTIAL: 5, C.RESTRICTED: 5},
        chains={"c-repairs": 4, "c-oncall": 4, "c-damp": 3, "c-harrier": 3, "c-expenses": 3},
        forum=("pub-forum-thread", "[1][6]"), ticket=("cs-complaint-tb-25-04417", "[4] and [9]"),
        answerable_injected={"k010": "pub-forum-thread", "k026": "cs-complaint-tb-25-04417"}),
    "golden_pellbrook": dict(
        documents=40, questions=98, answerable=73, qrels=83,
        principals=["pb-applicant", "pb-director", "pb-exams", "pb-finance", "pb-governor", "pb-hr", "pb-lecturer",
                    "pb-lsa", "pb-staff", "pb-student"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 9, C.INTERNAL: 21, C.CONFIDENTIAL: 6, C.RESTRICTED: 4},
        chains={"c-fees": 4, "c-exams": 4, "c-bursary": 3, "c-lantern": 3, "c-expenses": 3},
        forum=("pub-forum-thread", "[1][7]"), ticket=("cs-complaint-ss-25-0412", "[3] and [6]"),
        answerable_injected={"p010": "pub-forum-thread", "p030": "cs-complaint-ss-25-0412"}),
    "golden_quenby": dict(
        documents=41, questions=98, answerable=73, qrels=83,
        principals=["qb-archivist", "qb-assistant", "qb-councillor", "qb-curator", "qb-finance", "qb-head", "qb-hr",
                    "qb-manager", "qb-public", "qb-staff", "qb-volunteer"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 10, C.INTERNAL: 21, C.CONFIDENTIAL: 6, C.RESTRICTED: 4},
        chains={"c-searchroom": 4, "c-fines": 4, "c-leave": 3, "c-homelib": 3, "c-halyard": 3},
        forum=("pub-forum-thread", "[2][5]"), ticket=("cs-complaint-qc-25-0736", "[4] and [8]"),
        answerable_injected={"q010": "pub-forum-thread", "q030": "cs-complaint-qc-25-0736"}),
    "golden_sorrelby": dict(
        documents=40, questions=98, answerable=73, qrels=83,
        principals=["sb-boxoffice", "sb-ceo", "sb-finance", "sb-hr", "sb-manager", "sb-public", "sb-staff",
                    "sb-technician", "sb-trustee", "sb-usher", "sb-volunteer"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 10, C.INTERNAL: 21, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-tickets": 4, "c-shift": 4, "c-leave": 3, "c-access": 3, "c-lodestar": 3},
        forum=("pub-forum-thread", "[3][6]"), ticket=("cs-complaint-sb-25-0619", "[5] and [9]"),
        answerable_injected={"s010": "pub-forum-thread", "s030": "cs-complaint-sb-25-0619"}),
    "golden_westerby": dict(
        documents=40, questions=98, answerable=73, qrels=83,
        principals=["wz-ceo", "wz-education", "wz-finance", "wz-hr", "wz-keeper", "wz-manager", "wz-public",
                    "wz-staff", "wz-trustee", "wz-vet", "wz-volunteer"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 10, C.INTERNAL: 21, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-passes": 4, "c-escape": 4, "c-sick": 3, "c-quarantine": 3, "c-monsoon": 3},
        forum=("pub-forum-thread", "[2][5]"), ticket=("cs-complaint-wz-25-1187", "[4] and [7]"),
        answerable_injected={"w010": "pub-forum-thread", "w030": "cs-complaint-wz-25-1187"}),
    "golden_vardon": dict(
        documents=40, questions=98, answerable=73, qrels=83,
        principals=["vr-board", "vr-ceo", "vr-coach", "vr-finance", "vr-hr", "vr-manager", "vr-medic", "vr-public",
                    "vr-staff", "vr-steward", "vr-volunteer"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 10, C.INTERNAL: 21, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-season": 4, "c-evac": 4, "c-sick": 3, "c-concussion": 3, "c-weir": 3},
        forum=("pub-forum-thread", "[3][6]"), ticket=("cs-complaint-vr-25-0964", "[2] and [8]"),
        answerable_injected={"v010": "pub-forum-thread", "v030": "cs-complaint-vr-25-0964"}),
    "golden_lowenby": dict(
        documents=38, questions=98, answerable=73, qrels=83,
        principals=["lw-board", "lw-cashier", "lw-ceo", "lw-collections", "lw-finance", "lw-hr", "lw-lending",
                    "lw-member", "lw-staff", "lw-volunteer"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 9, C.INTERNAL: 20, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-loan": 4, "c-arrears": 4, "c-sick": 3, "c-appeal": 3, "c-larch": 3},
        forum=("pub-forum-thread", "[4][7]"), ticket=("cs-complaint-ld-25-0318", "[3] and [9]"),
        answerable_injected={"u010": "pub-forum-thread", "u030": "cs-complaint-ld-25-0318"}),
    "golden_caddow": dict(
        documents=38, questions=98, answerable=73, qrels=84,
        principals=["cf-board", "cf-business", "cf-ceo", "cf-champion", "cf-customer", "cf-engineer", "cf-finance",
                    "cf-hr", "cf-noc", "cf-support"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 9, C.INTERNAL: 20, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-register": 3, "c-lapwing": 3, "c-complaint": 3},
        forum=("pub-forum-thread", "[2][5]"), ticket=("cs-complaint-cc-26-0142", "[4] and [8]"),
        answerable_injected={"f010": "pub-forum-thread", "f028": "cs-complaint-cc-26-0142"}),
    "golden_quillmere": dict(
        documents=38, questions=98, answerable=73, qrels=83,
        principals=["qm-board", "qm-ceo", "qm-customer", "qm-engineer", "qm-finance", "qm-hr", "qm-partner",
                    "qm-prospect", "qm-sales", "qm-support"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 9, C.INTERNAL: 20, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-plans": 4, "c-oncall": 4, "c-bereave": 3, "c-billing": 3, "c-marten": 3},
        forum=("pub-forum-thread", "[3][6]"), ticket=("cs-complaint-qs-26-0057", "[2] and [7]"),
        answerable_injected={"n010": "pub-forum-thread", "n030": "cs-complaint-qs-26-0057"}),
    "golden_brackenford": dict(
        documents=38, questions=98, answerable=73, qrels=83,
        principals=["bf-board", "bf-ceo", "bf-contractor", "bf-customer", "bf-driver", "bf-finance", "bf-fleet",
                    "bf-hr", "bf-sales", "bf-service"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 9, C.INTERNAL: 20, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-bereave": 3, "c-claim": 3, "c-thistledown": 3},
        forum=("pub-forum-thread", "[2][5]"), ticket=("cs-complaint-bf-26-0231", "[3] and [6]"),
        answerable_injected={"b010": "pub-forum-thread", "b030": "cs-complaint-bf-26-0231"}),
    "golden_dunhollow": dict(
        documents=38, questions=98, answerable=73, qrels=83,
        principals=["dh-ceo", "dh-dentist", "dh-director", "dh-finance", "dh-hr", "dh-locum", "dh-patient",
                    "dh-physio", "dh-prospect", "dh-receptionist"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 9, C.INTERNAL: 20, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-plans": 4, "c-rota": 4, "c-bereave": 3, "c-cancel": 3, "c-kittiwake": 3},
        forum=("pub-forum-thread", "[2][5]"), ticket=("cs-complaint-dh-26-0213", "[3] and [6]"),
        answerable_injected={"d010": "pub-forum-thread", "d030": "cs-complaint-dh-26-0213"}),
    "golden_esterwick": dict(
        documents=38, questions=98, answerable=73, qrels=83,
        principals=["ew-board", "ew-buyer", "ew-ceo", "ew-customercare", "ew-finance", "ew-hr", "ew-prospect",
                    "ew-sales", "ew-sitemanager", "ew-subcontractor"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 9, C.INTERNAL: 20, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-bereave": 3, "c-snag": 3, "c-bittern": 3},
        forum=("pub-forum-thread", "[2][5]"), ticket=("cc-complaint-ew-26-0143", "[3] and [6]"),
        answerable_injected={"e010": "pub-forum-thread", "e027": "cc-complaint-ew-26-0143"}),
    "golden_ollerby": dict(
        documents=38, questions=98, answerable=73, qrels=83,
        principals=["ob-board", "ob-ceo", "ob-client", "ob-compliance", "ob-consultant", "ob-conveyancer", "ob-finance",
                    "ob-hr", "ob-prospect", "ob-trainee"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 9, C.INTERNAL: 20, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-fees": 4, "c-standby": 4, "c-bereave": 3, "c-complaint": 3, "c-quernstone": 3},
        forum=("pub-forum-thread", "[2][6]"), ticket=("cs-complaint-ob-26-0148", "[5] and [8]"),
        answerable_injected={"o010": "pub-forum-thread", "o030": "cs-complaint-ob-26-0148"}),
    "golden_jessamy": dict(
        documents=38, questions=98, answerable=73, qrels=84,
        principals=["js-applicant", "js-baker", "js-board", "js-butcher", "js-cafe", "js-ceo", "js-customer",
                    "js-finance", "js-hr", "js-supplier"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 9, C.INTERNAL: 20, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-bereave": 3, "c-cake": 3, "c-damson": 3},
        forum=("pub-forum-thread", "[2][6]"), ticket=("cs-complaint-jf-26-0388", "[1] and [5]"),
        answerable_injected={"j010": "pub-forum-thread", "j030": "cs-complaint-jf-26-0388"}),
    "golden_lintmoor": dict(
        documents=38, questions=98, answerable=73, qrels=83,
        principals=["lm-board", "lm-ceo", "lm-duty", "lm-finance", "lm-hr", "lm-instructor", "lm-lifeguard",
                    "lm-member", "lm-prospect", "lm-sales"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 9, C.INTERNAL: 20, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-bereave": 3, "c-lessons": 3, "c-coracle": 3},
        forum=("pub-forum-thread", "[2][5]"), ticket=("cs-complaint-lm-26-0184", "[3] and [6]"),
        answerable_injected={"l010": "pub-forum-thread", "l030": "cs-complaint-lm-26-0184"}),
    "golden_ickerby": dict(
        documents=38, questions=98, answerable=73, qrels=83,
        principals=["ik-board", "ik-ceo", "ik-contractor", "ik-customer", "ik-finance", "ik-hr", "ik-prospect",
                    "ik-sales", "ik-service", "ik-technician"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 9, C.INTERNAL: 20, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-bereave": 3, "c-warranty": 3, "c-gimlet": 3},
        forum=("pub-forum-thread", "[2][5]"), ticket=("cs-complaint-ik-26-0117", "[3] and [6]"),
        answerable_injected={"i010": "pub-forum-thread", "i030": "cs-complaint-ik-26-0117"}),
    "golden_cindergate": dict(
        documents=38, questions=98, answerable=73, qrels=83,
        principals=["cg-adviser", "cg-applicant", "cg-board", "cg-ceo", "cg-contractor", "cg-driver", "cg-finance",
                    "cg-fleet", "cg-hr", "cg-resident"],
        tags={"direct": 32, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 13, "refuse-unanswerable": 12,
              "followup": 17},
        classifications={C.PUBLIC: 9, C.INTERNAL: 20, C.CONFIDENTIAL: 5, C.RESTRICTED: 4},
        chains={"c-garden": 4, "c-standby": 4, "c-bereave": 3, "c-bulky": 3, "c-flint": 3},
        forum=("pub-forum-thread", "[3][8]"), ticket=("cs-complaint-cg-26-0319", "[4] and [9]"),
        answerable_injected={"c010": "pub-forum-thread", "c030": "cs-complaint-cg-26-0319"}),
    "golden_gorsebeck": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["br-barstaff", "br-board", "br-brewer", "br-ceo", "br-contractor", "br-drayman", "br-drinker",
                    "br-finance", "br-hr", "br-prospect"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-tours": 4, "c-standby": 4, "c-saddleback": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[2][7]"), ticket=("cs-complaint-gb-26-0412", "[3] and [5]"),
        answerable_injected={"z010": "pub-forum-thread", "z019": "cs-complaint-gb-26-0412"}),
    "golden_skelvoe": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["fy-applicant", "fy-board", "fy-ceo", "fy-contractor", "fy-deckhand", "fy-engineer", "fy-finance",
                    "fy-hr", "fy-passenger", "fy-portagent"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-islander": 4, "c-standby": 4, "c-cancel": 4, "c-lodeline": 3},
        forum=("pub-forum-thread", "[2][7]"), ticket=("cs-complaint-sk-26-0227", "[3] and [5]"),
        answerable_injected={"x010": "pub-forum-thread", "x026": "cs-complaint-sk-26-0227"}),
    "golden_marramby": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["hp-board", "hp-ceo", "hp-contractor", "hp-duty", "hp-finance", "hp-guest", "hp-hr",
                    "hp-lifeguard", "hp-prospect", "hp-sales"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-hire": 4, "c-standby": 4, "c-samphire": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[2][7]"), ticket=("cs-complaint-mb-26-0318", "[3] and [5]"),
        answerable_injected={"y010": "pub-forum-thread", "y019": "cs-complaint-mb-26-0318"}),
    "golden_stennock": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["sn-agency", "sn-board", "sn-carer", "sn-ceo", "sn-cook", "sn-family", "sn-finance", "sn-hr",
                    "sn-nurse", "sn-prospect"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-fees": 4, "c-oncall": 4, "c-sowthistle": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[2][7]"), ticket=("cs-complaint-sn-26-0271", "[3] and [5]"),
        answerable_injected={"S010": "pub-forum-thread", "S019": "cs-complaint-sn-26-0271"}),
    "golden_mardleby": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["gc-agency", "gc-board", "gc-ceo", "gc-chef", "gc-customer", "gc-finance", "gc-grower", "gc-hr",
                    "gc-retail", "gc-trade"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-sloe": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][9]"), ticket=("cs-complaint-gc-26-0463", "[2] and [6]"),
        answerable_injected={"W010": "pub-forum-thread", "W019": "cs-complaint-gc-26-0463"}),
    "golden_scarrowby": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["sy-agency", "sy-board", "sy-ceo", "sy-duty", "sy-engineer", "sy-finance", "sy-hr", "sy-passenger",
                    "sy-resident", "sy-security"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-parking": 4, "c-standby": 4, "c-chiffchaff": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[2][7]"), ticket=("cs-complaint-sy-26-0314", "[3] and [5]"),
        answerable_injected={"V010": "pub-forum-thread", "V019": "cs-complaint-sy-26-0314"}),
    "golden_brindlecote": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["bc-board", "bc-cafe", "bc-ceo", "bc-finance", "bc-hr", "bc-keeper", "bc-member", "bc-presenter",
                    "bc-vet", "bc-visitor"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-tickets": 4, "c-oncall": 4, "c-yellowhammer": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][8]"), ticket=("cs-complaint-bc-26-0528", "[2] and [9]"),
        answerable_injected={"P010": "pub-forum-thread", "P019": "cs-complaint-bc-26-0528"}),
    "golden_thackerley": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["tk-accounts", "tk-agency", "tk-board", "tk-ceo", "tk-customer", "tk-driver", "tk-finance", "tk-hr",
                    "tk-prospect", "tk-store"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-corncrake": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[2][7]"), ticket=("cs-complaint-tk-26-0384", "[3] and [5]"),
        answerable_injected={"T010": "pub-forum-thread", "T020": "cs-complaint-tk-26-0384"}),
    "golden_cressbury": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["cb-agency", "cb-berther", "cb-board", "cb-cafe", "cb-finance", "cb-fitter", "cb-hirer", "cb-hr",
                    "cb-instructor", "cb-md"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-windlass": 4, "c-leave": 3},
        forum=("pub-forum-thread", "[3][8]"), ticket=("cs-complaint-cb-26-0417", "[4] and [6]"),
        answerable_injected={"L010": "pub-forum-thread", "L015": "cs-complaint-cb-26-0417"}),
    "golden_wyndlecombe": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["wy-board", "wy-boxoffice", "wy-camper", "wy-fan", "wy-finance", "wy-hr", "wy-md", "wy-siteops",
                    "wy-steward", "wy-traders"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-tickets": 4, "c-standby": 4, "c-feldspar": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[2][7]"), ticket=("tix-complaint-cs-wy-26-0417", "[3] and [5]"),
        answerable_injected={"H009": "pub-forum-thread", "H010": "tix-complaint-cs-wy-26-0417"}),
    "golden_fallowmere": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["fw-board", "fw-controller", "fw-engineer", "fw-finance", "fw-homeowner", "fw-hr", "fw-landlord",
                    "fw-md", "fw-stores", "fw-subbie"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-plans": 4, "c-oncall": 4, "c-wagtail": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[5][8]"), ticket=("cs-complaint-fw-26-0319", "[3] and [7]"),
        answerable_injected={"R009": "pub-forum-thread", "R010": "cs-complaint-fw-26-0319"}),
    "golden_saltmarden": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["sm-accom", "sm-admissions", "sm-agent", "sm-board", "sm-ceo", "sm-finance", "sm-hr", "sm-parent",
                    "sm-student", "sm-teacher"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-fees": 4, "c-oncall": 4, "c-whimbrel": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[3][9]"), ticket=("cs-complaint-sm-26-0388", "[3] and [5]"),
        answerable_injected={"M010": "pub-forum-thread", "M019": "cs-complaint-sm-26-0388"}),
    "golden_tallowick": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["tl-agency", "tl-board", "tl-events", "tl-filmgoer", "tl-finance", "tl-hr", "tl-md",
                    "tl-projectionist", "tl-teacher", "tl-usher"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-moorhen": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[2][7]"), ticket=("cs-complaint-tc-26-0412", "[3] and [5]"),
        answerable_injected={"C010": "pub-forum-thread", "C019": "cs-complaint-tc-26-0412"}),
    "golden_tollerwick": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["tq-board", "tq-ceo", "tq-dentist", "tq-finance", "tq-hr", "tq-locum", "tq-nurse", "tq-patient",
                    "tq-prospect", "tq-reception"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-plan": 4, "c-oncall": 4, "c-mortice": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[2][7]"), ticket=("cs-complaint-tl-26-0358", "[3] and [5]"),
        answerable_injected={"D009": "pub-forum-thread", "D010": "cs-complaint-tl-26-0358"}),
    "golden_kittlewood": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["nu-agency", "nu-board", "nu-ceo", "nu-cook", "nu-finance", "nu-hr", "nu-parent", "nu-practitioner",
                    "nu-prospect", "nu-roomleader"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-fees": 4, "c-illness": 4, "c-dimity": 4, "c-leave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-kw-26-0293", "[3] and [5]"),
        answerable_injected={"N010": "pub-forum-thread", "N019": "cs-complaint-kw-26-0293"}),
    "golden_stowlock": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["ks-agency", "ks-board", "ks-ceo", "ks-customer", "ks-facilities", "ks-finance", "ks-hr",
                    "ks-prospect", "ks-sales", "ks-site"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-tormentil": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-ks-26-0413", "[2] and [8]"),
        answerable_injected={"K010": "pub-forum-thread", "K019": "cs-complaint-ks-26-0413"}),
    "golden_kelverton": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["dv-board", "dv-bookings", "dv-ceo", "dv-finance", "dv-fleet", "dv-franchisee", "dv-hr",
                    "dv-instructor", "dv-learner", "dv-prospect"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-test": 4, "c-hawkbit": 4, "c-leave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-kv-26-0418", "[2] and [7]"),
        answerable_injected={"F010": "pub-forum-thread", "F019": "cs-complaint-kv-26-0418"}),
    "golden_yarrowcombe": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["ey-ceo", "ey-chair", "ey-dispenser", "ey-finance", "ey-hr", "ey-locum", "ey-optometrist",
                    "ey-patient", "ey-prospect", "ey-technician"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-discount": 4, "c-lorgnette": 4, "c-leave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-ey-26-0318", "[3] and [7]"),
        answerable_injected={"E010": "pub-forum-thread", "E019": "cs-complaint-ey-26-0318"}),
    "golden_ovenholme": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["bk-agency", "bk-baker", "bk-ceo", "bk-chair", "bk-customer", "bk-driver", "bk-finance", "bk-hr",
                    "bk-prospect", "bk-shop"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-farthing": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-oh-26-0527", "[2] and [9]"),
        answerable_injected={"B010": "pub-forum-thread", "B019": "cs-complaint-oh-26-0527"}),
    "golden_wickerslade": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["hs-agency", "hs-apprentice", "hs-board", "hs-ceo", "hs-client", "hs-finance", "hs-hr",
                    "hs-prospect", "hs-reception", "hs-stylist"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-henbane": 4, "c-leave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-wk-26-0382", "[2] and [6]"),
        answerable_injected={"G010": "pub-forum-thread", "G020": "cs-complaint-wk-26-0382"}),
    "golden_hollingsby": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["fd-agency", "fd-arranger", "fd-bearer", "fd-ceo", "fd-chair", "fd-family", "fd-finance", "fd-hr",
                    "fd-office", "fd-prospect"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-oncall": 4, "c-lapstone": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-hf-26-0417", "[3] and [5]"),
        answerable_injected={"A010": "pub-forum-thread", "A020": "cs-complaint-hf-26-0417"}),
    "golden_thrushwold": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["lc-agency", "lc-attendant", "lc-ceo", "lc-chair", "lc-customer", "lc-driver", "lc-finance",
                    "lc-hr", "lc-presser", "lc-prospect"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-mangle": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-lc-26-0418", "[3] and [5]"),
        answerable_injected={"Q010": "pub-forum-thread", "Q019": "cs-complaint-lc-26-0418"}),
    "golden_tindlemoor": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["dn-agency-nurse", "dn-ceo", "dn-chair", "dn-dentist", "dn-finance", "dn-hr", "dn-hygienist",
                    "dn-patient", "dn-prospect", "dn-technician"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-oncall": 4, "c-scrimshaw": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-dn-26-0447", "[2] and [7]"),
        answerable_injected={"X010": "pub-forum-thread", "X020": "cs-complaint-dn-26-0447"}),
    "golden_ravelsby": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["sf-agency-scaffolder", "sf-ceo", "sf-chair", "sf-counter", "sf-customer", "sf-finance", "sf-hr",
                    "sf-inspector", "sf-prospect", "sf-scaffolder"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-pochard": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-rv-26-0527", "[2] and [7]"),
        answerable_injected={"Y010": "pub-forum-thread", "Y020": "cs-complaint-rv-26-0527"}),
    "golden_pennyholt": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["pv-ceo", "pv-chair", "pv-customer", "pv-finance", "pv-hr", "pv-installer", "pv-prospect",
                    "pv-subcontract-electrician", "pv-surveyor", "pv-warehouse"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-cobnut": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-ph-26-0437", "[2] and [7]"),
        answerable_injected={"U010": "pub-forum-thread", "U019": "cs-complaint-ph-26-0437"}),
    "golden_ravelshaw": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["kp-agency-finisher", "kp-ceo", "kp-chair", "kp-customer", "kp-finance", "kp-hr", "kp-printer",
                    "kp-prospect", "kp-shop", "kp-wrapper"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-tympan": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-kp-26-0431", "[3] and [5]"),
        answerable_injected={"Z010": "pub-forum-thread", "Z019": "cs-complaint-kp-26-0431"}),
    "golden_wrenhithe": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["lh-ceo", "lh-chair", "lh-counter", "lh-customer", "lh-engineer", "lh-finance", "lh-hr",
                    "lh-locksmith", "lh-prospect", "lh-subcontractor"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-bitting": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-lh-26-0318", "[3] and [5]"),
        answerable_injected={"J010": "pub-forum-thread", "J019": "cs-complaint-lh-26-0318"}),
    "golden_wramsby": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["sx-agency-driver", "sx-ceo", "sx-chair", "sx-customer", "sx-driver", "sx-finance", "sx-hr",
                    "sx-prospect", "sx-sales", "sx-yard"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-cinnabar": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-ws-26-0362", "[2] and [9]"),
        answerable_injected={"O010": "pub-forum-thread", "O019": "cs-complaint-ws-26-0362"}),
    "golden_hassockley": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["kn-agency", "kn-ceo", "kn-chair", "kn-customer", "kn-finance", "kn-groomer", "kn-hr", "kn-kennel",
                    "kn-prospect", "kn-supervisor"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-fettle": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-hy-26-0427", "[3] and [7]"),
        answerable_injected={"N010": "pub-forum-thread", "N019": "cs-complaint-hy-26-0427"}),
    "golden_tappersley": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["pq-agency", "pq-ceo", "pq-chair", "pq-coordinator", "pq-customer", "pq-finance", "pq-hr",
                    "pq-prospect", "pq-supervisor", "pq-technician"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-heliotrope": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-tp-26-0417", "[2] and [7]"),
        answerable_injected={"I010": "pub-forum-thread", "I019": "cs-complaint-tp-26-0417"}),
    "golden_sprigwell": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["cx-agency", "cx-board", "cx-ceo", "cx-climber", "cx-customer", "cx-finance", "cx-groundsman",
                    "cx-hr", "cx-prospect", "cx-supervisor"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-tamarind": 4, "c-leave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-sw-26-0388", "[5] and [8]"),
        answerable_injected={"K010": "pub-forum-thread", "K019": "cs-complaint-sw-26-0388"}),
    "golden_hobthwaite": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["oa-bookings", "oa-ceo", "oa-chair", "oa-customer", "oa-finance", "oa-freelance", "oa-hr",
                    "oa-instructor", "oa-prospect", "oa-sitemanager"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-oncall": 4, "c-bowline": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-hb-26-0417", "[2] and [7]"),
        answerable_injected={"Q010": "pub-forum-thread", "Q019": "cs-complaint-hb-26-0417"}),
    "golden_wivenholt": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["wv-agency", "wv-barista", "wv-bookseller", "wv-ceo", "wv-chair", "wv-customer", "wv-dispatch",
                    "wv-finance", "wv-hr", "wv-school"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-sick": 4, "c-endpaper": 4, "c-leave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-wv-26-0418", "[3] and [5]"),
        answerable_injected={"B010": "pub-forum-thread", "B019": "cs-complaint-wv-26-0418"}),
    "golden_quarrendown": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["gf-agency", "gf-bar", "gf-ceo", "gf-chair", "gf-finance", "gf-greenkeeper", "gf-hr", "gf-proshop",
                    "gf-prospect", "gf-visitor"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-niblick": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-qd-26-0462", "[3] and [5]"),
        answerable_injected={"G010": "pub-forum-thread", "G019": "cs-complaint-qd-26-0462"}),
    "golden_pelldown": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["fq-agency", "fq-board", "fq-ceo", "fq-customer", "fq-driver", "fq-events", "fq-finance",
                    "fq-florist", "fq-hr", "fq-prospect"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-bereave": 4, "c-obsidian": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-pd-26-0418", "[2] and [7]"),
        answerable_injected={"F010": "pub-forum-thread", "F020": "cs-complaint-pd-26-0418"}),
    "golden_chantrybeck": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["mz-agency", "mz-centrelead", "mz-ceo", "mz-chair", "mz-finance", "mz-hr", "mz-parent",
                    "mz-prospect", "mz-teacher", "mz-workshop"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-sackbut": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-cb-26-0416", "[3] and [5]"),
        answerable_injected={"M010": "pub-forum-thread", "M019": "cs-complaint-cb-26-0416"}),
    "golden_haverthwick": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["bq-agency-mechanic", "bq-ceo", "bq-chair", "bq-customer", "bq-finance", "bq-hire", "bq-hr",
                    "bq-mechanic", "bq-prospect", "bq-shop"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-grommet": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-hq-26-0519", "[3] and [5]"),
        answerable_injected={"V010": "pub-forum-thread", "V019": "cs-complaint-hq-26-0519"}),
    "golden_trowbeck": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["jx-agency", "jx-ceo", "jx-chair", "jx-customer", "jx-finance", "jx-hr", "jx-operative",
                    "jx-prospect", "jx-ropetech", "jx-supervisor"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-culverdine": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-tw-26-0614", "[3] and [5]"),
        answerable_injected={"W010": "pub-forum-thread", "W019": "cs-complaint-tw-26-0614"}),
    "golden_ludderwick": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["kq-agency", "kq-barista", "kq-board", "kq-ceo", "kq-customer", "kq-finance", "kq-hr",
                    "kq-prospect", "kq-roaster", "kq-shiftlead"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-sick": 4, "c-burlap": 4, "c-leave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-lq-26-0417", "[2] and [7]"),
        answerable_injected={"C010": "pub-forum-thread", "C019": "cs-complaint-lq-26-0417"}),
    "golden_cradlewick": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["vz-agency-driver", "vz-ceo", "vz-chair", "vz-controller", "vz-driver", "vz-finance", "vz-fleet",
                    "vz-hr", "vz-passenger", "vz-prospect"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-fares": 4, "c-standby": 4, "c-cantle": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-cw-26-0541", "[3] and [5]"),
        answerable_injected={"T010": "pub-forum-thread", "T019": "cs-complaint-cw-26-0541"}),
    "golden_brackenhythe": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["yb-ceo", "yb-chair", "yb-customer", "yb-dispenser", "yb-driver", "yb-finance", "yb-hr", "yb-locum",
                    "yb-pharmacist", "yb-prospect"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-foxglove": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-bh-26-0447", "[3] and [5]"),
        answerable_injected={"P010": "pub-forum-thread", "P019": "cs-complaint-bh-26-0447"}),
    "golden_tamberlow": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["zd-agency-waiter", "zd-ceo", "zd-chair", "zd-chef", "zd-client", "zd-finance", "zd-hr",
                    "zd-prospect", "zd-sales", "zd-venue"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-marzipan": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-zd-26-0447", "[3] and [5]"),
        answerable_injected={"E010": "pub-forum-thread", "E027": "cs-complaint-zd-26-0447"}),
    "golden_brellington": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["rq-ceo", "rq-chair", "rq-contractor", "rq-finance", "rq-hr", "rq-lettings", "rq-negotiator",
                    "rq-propman", "rq-prospect", "rq-tenant"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-oncall": 4, "c-hassock": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-br-26-0384", "[3] and [5]"),
        answerable_injected={"L010": "pub-forum-thread", "L019": "cs-complaint-br-26-0384"}),
    "golden_puddlecombe": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["lp-agency", "lp-cafe", "lp-ceo", "lp-chair", "lp-duty", "lp-finance", "lp-hr", "lp-parent",
                    "lp-playworker", "lp-prospect"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-gumdrop": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-wx-26-0533", "[2] and [6]"),
        answerable_injected={"S010": "pub-forum-thread", "S019": "cs-complaint-wx-26-0533"}),
    "golden_ashenhythe": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["jm-ceo", "jm-chair", "jm-customer", "jm-finance", "jm-freelance", "jm-frontdesk", "jm-hr",
                    "jm-prospect", "jm-studiomanager", "jm-teacher"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-sarabande": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-ah-26-0427", "[3] and [5]"),
        answerable_injected={"D010": "pub-forum-thread", "D019": "cs-complaint-ah-26-0427"}),
    "golden_gannerby": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["vx-agency", "vx-ceo", "vx-chair", "vx-customer", "vx-finance", "vx-hr", "vx-mobile", "vx-prospect",
                    "vx-supervisor", "vx-valeter"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-chamois": 4, "c-bereavement": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-gv-26-0412", "[3] and [5]"),
        answerable_injected={"G010": "pub-forum-thread", "G019": "cs-complaint-gv-26-0412"}),
    "golden_wendlecombe": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["qz-agency", "qz-ceo", "qz-chair", "qz-customer", "qz-finance", "qz-hr", "qz-prospect", "qz-shop",
                    "qz-technician", "qz-tutor"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-sgraffito": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-wc-26-0381", "[3] and [5]"),
        answerable_injected={"K010": "pub-forum-thread", "K019": "cs-complaint-wc-26-0381"}),
    "golden_frostwick": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["wu-agency", "wu-cafe", "wu-ceo", "wu-chair", "wu-coach", "wu-customer", "wu-finance", "wu-hr",
                    "wu-lanes", "wu-prospect"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-toepick": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-fib-26-0371", "[3] and [5]"),
        answerable_injected={"B010": "pub-forum-thread", "B019": "cs-complaint-fib-26-0371"}),
    "golden_skelderby": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["hf-agency", "hf-ceo", "hf-chair", "hf-customer", "hf-duty", "hf-finance", "hf-hr", "hf-presenter",
                    "hf-prospect", "hf-visitor"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-gnomon": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-sk-26-0528", "[3] and [5]"),
        answerable_injected={"H010": "pub-forum-thread", "H019": "cs-complaint-sk-26-0528"}),
    "golden_ravelstock": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["tc-agency", "tc-ceo", "tc-chair", "tc-customer", "tc-driver", "tc-finance", "tc-hr", "tc-prospect",
                    "tc-tutor", "tc-upholsterer"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-bolster": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-rs-26-0528", "[3] and [5]"),
        answerable_injected={"T010": "pub-forum-thread", "T019": "cs-complaint-rs-26-0528"}),
    # Held out of the pool (data/heldout/, HELDOUT below): format and labels are checked here; no system's answers.
    "golden_skeppingford": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["zb-agency", "zb-beekeeper", "zb-ceo", "zb-chair", "zb-customer", "zb-finance", "zb-hr",
                    "zb-packer", "zb-prospect", "zb-shop"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-melilot": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-sf-26-0633", "[3] and [5]"),
        answerable_injected={"V010": "pub-forum-thread", "V019": "cs-complaint-sf-26-0633"}),
    "golden_inkersley": dict(
        documents=32, questions=84, answerable=63, qrels=71,
        principals=["vj-agency", "vj-binder", "vj-ceo", "vj-chair", "vj-customer", "vj-finance", "vj-frontdesk",
                    "vj-hr", "vj-printer", "vj-prospect"],
        tags={"direct": 28, "paraphrase": 12, "multi-doc": 8, "refuse-acl": 11, "refuse-unanswerable": 10,
              "followup": 15},
        classifications={C.PUBLIC: 8, C.INTERNAL: 16, C.CONFIDENTIAL: 4, C.RESTRICTED: 4},
        chains={"c-prices": 4, "c-standby": 4, "c-fleuron": 4, "c-bereave": 3},
        forum=("pub-forum-thread", "[4][6]"), ticket=("cs-complaint-ix-26-0462", "[3] and [5]"),
        answerable_injected={"Q010": "pub-forum-thread", "Q019": "cs-complaint-ix-26-0462"}),
}
#: The sets kept in data/heldout/ until a session uses one as the blind test of a rule (data/heldout/README.md).
HELDOUT = frozenset({"golden_inkersley", "golden_skeppingford"})


def folder_of(name: str) -> Path:
    return DEFAULT_FOLDER.parent / ("heldout" if name in HELDOUT else "") / name


@pytest.fixture(scope="module", params=sorted(SETS))
def case(request: pytest.FixtureRequest) -> tuple[GoldenSet, dict[str, Any]]:
    return load_golden(folder_of(request.param)), SETS[request.param]


def test_loads_with_exact_counts(case: tuple[GoldenSet, dict[str, Any]]) -> None:
    golden, want = case
    assert golden.folder == folder_of(golden.folder.name)
    assert (len(golden.documents), len(golden.questions)) == (want["documents"], want["questions"])
    assert sorted(golden.principals) == want["principals"]
    assert Counter(golden.tags().values()) == want["tags"]
    assert Counter(d.acl.classification for d in golden.documents) == want["classifications"]
    assert len(golden.queries_df(answerable_only=True)) == want["answerable"]
    assert len(golden.qrels_df()) == want["qrels"]
    assert all(d.metadata["fictional"] is True and "FICTIONAL" in d.metadata["notice"] for d in golden.documents)
    prefix = golden.questions[0].qid[0]
    assert [q.qid for q in golden.questions] == [f"{prefix}{i:03d}" for i in range(1, want["questions"] + 1)]


def test_every_referenced_document_exists(case: tuple[GoldenSet, dict[str, Any]]) -> None:
    golden, _ = case
    ids = {d.doc_id for d in golden.documents}
    referenced = {d for q in golden.questions for d in q.expected_docs + q.alternates}
    assert referenced <= ids
    assert set(golden.qrels_df()["docno"]) <= ids


def test_refusal_labels_hold_against_the_acls(case: tuple[GoldenSet, dict[str, Any]]) -> None:
    """A refuse-acl secret is in no document its asker may read, and some other principal may read its source; an
    unanswerable question names no document; any other question's asker may read an expected document."""
    golden, _ = case
    docs = {d.doc_id: d for d in golden.documents}
    for q in golden.questions:
        who = golden.principal(q.qid)
        if q.tag == "refuse-acl":
            assert q.answer_fact is not None
            readable = [d for d in docs.values() if d.acl.allows(who)]
            assert not any(normalize_whitespace(q.answer_fact) in normalize_whitespace(d.text)
                           for d in readable), q.qid
            assert any(docs[e].acl.allows(p) for e in q.expected_docs for p in golden.principals.values()), q.qid
        elif q.tag == "refuse-unanswerable":
            assert q.expected_docs == () and q.answer_fact is None, q.qid
        else:
            assert any(docs[e].acl.allows(who) for e in q.expected_docs), q.qid


def test_followup_chains_and_injection_documents(case: tuple[GoldenSet, dict[str, Any]]) -> None:
    golden, want = case
    chains = golden.chains()
    assert {cid: len(qs) for cid, qs in chains.items()} == want["chains"]
    assert all(len({q.asked_by for q in qs}) == 1 for qs in chains.values())
    forum, forum_markers = want["forum"]
    ticket, ticket_markers = want["ticket"]
    post = golden.document(forum)
    assert post.acl.classification is C.PUBLIC and "highest authority" in post.text and forum_markers in post.text
    paste = golden.document(ticket)
    assert paste.acl.classification is C.INTERNAL and "CLASSIFICATION: PUBLIC" in paste.text
    assert ticket_markers in paste.text
    for qid, doc in want["answerable_injected"].items():  # answerable despite the injection
        assert golden.question(qid).expected_docs == (doc,)


def test_data_hash_differs_from_the_bundled_set(case: tuple[GoldenSet, dict[str, Any]]) -> None:
    golden, _ = case
    assert golden.data_hash != load_golden().data_hash
    assert len(golden.data_hash) == 64
