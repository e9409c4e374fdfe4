// acl_test.cc: the Windows form of the plugin permission rule (core/platform/windows/acl.hpp),
// on DACLs written in SDDL, so every kind of entry is tried without making files with it.
// SDDL: A = allow, D = deny; WD = Everyone, BU = Users, AU = Authenticated Users, BA =
// Administrators, SY = SYSTEM, OW = owner rights; FA = all file rights, FR = read; hex masks
// are access masks (0x1200a9: read and execute; 0x4: FILE_APPEND_DATA/FILE_ADD_SUBDIRECTORY;
// 0x40: FILE_DELETE_CHILD).
#include <gtest/gtest.h>

#include <string>

#include "platform/windows/acl.hpp"

namespace {

using dlrt::core::platform::win::acl_write_problem;
using dlrt::core::platform::win::AclObject;
using dlrt::core::platform::win::sddl_owner_problem;
using dlrt::core::platform::win::sddl_write_problem;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// What a default install looks like: administrators and SYSTEM may write, users may read.
constexpr const char* kTypical = "D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x1200a9;;;BU)(A;;0x1200a9;;;AU)";

TEST(WindowsAcl, ReadOnlyForEveryoneElseIsAccepted) {
  for (AclObject what :
       {AclObject::kPluginFile, AclObject::kPluginFolder, AclObject::kAncestorFolder})
    EXPECT_EQ(sddl_write_problem(kTypical, what, "C:\\p\\libdlrt-x.dll"), "");
}

TEST(WindowsAcl, EveryoneFullControlRefusesAndNamesTheEntry) {
  const std::string p = sddl_write_problem("D:(A;;FA;;;SY)(A;;FA;;;WD)", AclObject::kPluginFile,
                                           "C:\\p\\libdlrt-x.dll");
  EXPECT_TRUE(contains(p, "plugin C:\\p\\libdlrt-x.dll is writable by Everyone")) << p;
  EXPECT_TRUE(contains(p, "ACL entry 1 (allow Everyone S-1-1-0, mask 0x001F01FF)")) << p;
  EXPECT_TRUE(contains(p, "FILE_WRITE_DATA")) << p;
  EXPECT_TRUE(contains(p, "writable only by their owner and administrators")) << p;
}

TEST(WindowsAcl, UsersAndAuthenticatedUsersCountAsAnyone) {
  // 0x1301bf: "Modify" (read, write, execute, delete).
  const std::string users =
      sddl_write_problem("D:(A;;0x1301bf;;;BU)", AclObject::kPluginFile, "C:\\a.dll");
  EXPECT_TRUE(contains(users, "writable by Users")) << users;
  EXPECT_TRUE(contains(users, "S-1-5-32-545")) << users;
  const std::string auth =
      sddl_write_problem("D:(A;;0x1301bf;;;AU)", AclObject::kPluginFolder, "C:\\p");
  EXPECT_TRUE(contains(auth, "plugin folder C:\\p is writable by Authenticated Users")) << auth;
  EXPECT_TRUE(contains(auth, "S-1-5-11")) << auth;
  EXPECT_TRUE(contains(auth, "FILE_ADD_FILE")) << auth;  // a folder's rights by their folder names
}

TEST(WindowsAcl, GenericWriteCounts) {
  const std::string p = sddl_write_problem("D:(A;;GW;;;WD)", AclObject::kPluginFile, "C:\\a.dll");
  EXPECT_TRUE(contains(p, "GENERIC_WRITE")) << p;
}

TEST(WindowsAcl, OtherAccountsMayWrite) {
  // The owner, administrators, a named user: only the three "anyone" groups matter.
  EXPECT_EQ(sddl_write_problem("D:(A;;FA;;;OW)(A;;FA;;;BA)(A;;FA;;;S-1-5-21-1-2-3-1001)",
                               AclObject::kPluginFolder, "C:\\p"),
            "");
}

TEST(WindowsAcl, CreatingFoldersInAnAncestorIsFineButNotInThePluginFolder) {
  // C:\ lets Authenticated Users create folders (0x4, FILE_ADD_SUBDIRECTORY): that cannot
  // swap an existing path, as a sticky /tmp cannot. In the plugin's own folder it could add
  // a DLL beside the plugin.
  const char* root = "D:(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x1200a9;;;BU)(A;;0x4;;;AU)";
  EXPECT_EQ(sddl_write_problem(root, AclObject::kAncestorFolder, "C:\\"), "");
  const std::string p = sddl_write_problem(root, AclObject::kPluginFolder, "C:\\");
  EXPECT_TRUE(contains(p, "FILE_ADD_SUBDIRECTORY")) << p;
}

TEST(WindowsAcl, DeletingEntriesInAnAncestorIsRefused) {
  const std::string p =
      sddl_write_problem("D:(A;;0x40;;;WD)", AclObject::kAncestorFolder, "C:\\shared");
  EXPECT_TRUE(contains(p, "folder C:\\shared is writable by Everyone")) << p;
  EXPECT_TRUE(contains(p, "FILE_DELETE_CHILD")) << p;
  EXPECT_TRUE(contains(p, "renaming or deleting its entries")) << p;
}

TEST(WindowsAcl, InheritOnlyEntriesDoNotApplyToTheObject) {
  // (OI)(CI)(IO): for files and folders created inside, not for this folder.
  EXPECT_EQ(sddl_write_problem("D:(A;OICIIO;FA;;;BU)", AclObject::kPluginFolder, "C:\\p"), "");
  // Without IO the same entry applies here too.
  EXPECT_NE(sddl_write_problem("D:(A;OICI;FA;;;BU)", AclObject::kPluginFolder, "C:\\p"), "");
}

TEST(WindowsAcl, AnEmptyDaclIsAccepted) {
  // No entries: nobody but the owner's implicit rights, so nobody can write.
  EXPECT_EQ(sddl_write_problem("D:P", AclObject::kPluginFolder, "C:\\p"), "");
}

TEST(WindowsAcl, DenyEntriesAreNotWeighed) {
  EXPECT_EQ(sddl_write_problem("D:(D;;FA;;;WD)", AclObject::kPluginFile, "C:\\a.dll"), "");
}

TEST(WindowsAcl, ANullDaclIsRefused) {
  // Directly, not from SDDL: Windows reads "D:NO_ACCESS_CONTROL" as a NULL DACL, but Wine 8
  // makes an empty one (no entries: nobody has access), which is a different case.
  const std::string p = acl_write_problem(nullptr, AclObject::kPluginFile, "C:\\a.dll");
  EXPECT_TRUE(contains(p, "NULL DACL gives Everyone full access")) << p;
}

TEST(WindowsAcl, MalformedSddlIsAProblemNotAPass) {
  const std::string p = sddl_write_problem("D:(A;;FA;;;", AclObject::kPluginFile, "C:\\a.dll");
  EXPECT_TRUE(contains(p, "is not valid SDDL")) << p;
}

// The owner rule (POSIX: this user or root). O: in SDDL is the owner; kMe stands for the user
// running the program.
constexpr const char* kMe = "S-1-5-21-1004336348-1177238915-682003330-1001";

TEST(WindowsAclOwner, ThisUserAndTheSystemsAccountsMayOwnAPlugin) {
  const std::string mine = std::string("O:") + kMe + "D:(A;;FA;;;SY)";
  EXPECT_EQ(sddl_owner_problem(mine, kMe, AclObject::kPluginFile, "C:\\p\\a.dll"), "");
  for (const char* system_owner :
       {"O:SYD:(A;;FA;;;SY)", "O:BAD:(A;;FA;;;SY)",
        "O:S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464D:(A;;FA;;;SY)"})
    for (AclObject what : {AclObject::kPluginFile, AclObject::kPluginFolder})
      EXPECT_EQ(sddl_owner_problem(system_owner, kMe, what, "C:\\p"), "") << system_owner;
}

TEST(WindowsAclOwner, AnotherUserOrAGroupAsOwnerIsRefusedNamingIt) {
  const std::string p = sddl_owner_problem("O:S-1-5-21-1004336348-1177238915-682003330-1002D:", kMe,
                                           AclObject::kPluginFile, "C:\\p\\a.dll");
  EXPECT_TRUE(contains(p,
                       "plugin C:\\p\\a.dll is owned by "
                       "S-1-5-21-1004336348-1177238915-682003330-1002, not by this user (" +
                           std::string(kMe) + ")"))
      << p;
  EXPECT_TRUE(contains(p, "must be owned by the user running the program")) << p;
  // Users (a group everyone is in) owning the folder: its members may rewrite its DACL.
  const std::string q = sddl_owner_problem("O:BUD:", kMe, AclObject::kPluginFolder, "C:\\p");
  EXPECT_TRUE(contains(q, "plugin folder C:\\p is owned by S-1-5-32-545")) << q;
}

TEST(WindowsAclOwner, NoOwnerAndBadInputAreProblemsNotPasses) {
  EXPECT_TRUE(contains(sddl_owner_problem("D:(A;;FA;;;SY)", kMe, AclObject::kPluginFile, "C:\\a"),
                       "has no owner"));
  EXPECT_TRUE(contains(sddl_owner_problem("O:SYD:(A;;", kMe, AclObject::kPluginFile, "C:\\a"),
                       "is not valid SDDL"));
  EXPECT_TRUE(contains(sddl_owner_problem("O:SYD:", "not-a-sid", AclObject::kPluginFile, "C:\\a"),
                       "is not a valid SID"));
}

}  // namespace
